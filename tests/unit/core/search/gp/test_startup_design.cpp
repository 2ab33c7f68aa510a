#define BOOST_TEST_MODULE core_startup_design
#include <boost/test/unit_test.hpp>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/search/gp/startup_design.hpp"

using slurmtune::core::gp::SobolDesign;

namespace {

// How many of `points`' coordinate `k` fall in each of `bins` equal bins of [0, 1).
std::vector<int> bin_counts(const SobolDesign& design, std::size_t n, std::size_t k, int bins) {
  std::vector<int> counts(static_cast<std::size_t>(bins), 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    const double u = design.point(i)[k];
    BOOST_TEST(u >= 0.0);
    BOOST_TEST(u < 1.0);
    ++counts[static_cast<std::size_t>(u * bins)];
  }
  return counts;
}

}  // namespace

// Independent draws leave bins empty and doubled; the first 2^m points of the shifted
// Sobol sequence put exactly 2^m / bins in each, in every coordinate and for any seed.
BOOST_AUTO_TEST_CASE(the_first_points_fill_every_bin_of_every_coordinate_equally) {
  for (const std::uint64_t seed : {1u, 7u, 12345u}) {
    const SobolDesign design(5, seed);
    for (std::size_t k = 0; k < 5; ++k) {
      BOOST_TEST(bin_counts(design, 8, k, 8) == std::vector<int>(8, 1),
                 boost::test_tools::per_element());
      BOOST_TEST(bin_counts(design, 16, k, 4) == std::vector<int>(4, 4),
                 boost::test_tools::per_element());
    }
  }
}

// In two coordinates at once: 16 points, one in each cell of a 4 x 4 grid.
BOOST_AUTO_TEST_CASE(pairs_of_coordinates_are_stratified_too) {
  const SobolDesign design(2, 3);
  std::set<std::pair<int, int>> cells;
  for (std::uint64_t i = 0; i < 16; ++i) {
    const auto u = design.point(i);
    cells.emplace(static_cast<int>(u[0] * 4), static_cast<int>(u[1] * 4));
  }
  BOOST_TEST(cells.size() == 16u);
}

BOOST_AUTO_TEST_CASE(a_point_depends_on_the_seed_and_its_index_alone) {
  const SobolDesign a(3, 42), b(3, 42), c(3, 43);
  BOOST_TEST(a.point(5) == b.point(5), boost::test_tools::per_element());
  BOOST_TEST(a.point(5) != c.point(5));
  BOOST_TEST(a.point(5) != a.point(6));
  BOOST_TEST(SobolDesign(0, 1).point(3).empty());
  BOOST_CHECK_THROW(SobolDesign(100000, 1), slurmtune::InputError);
}
