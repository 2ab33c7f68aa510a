#define BOOST_TEST_MODULE core_observation_choice
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include "core/random.hpp"
#include "core/search/gp/observation_choice.hpp"

using namespace slurmtune::core;
using gp::RankedScore;

namespace {

// The rule as MOBSTER first wrote it (a full sort of every observation on every
// question), kept here as the reference the incremental choice must equal.
std::vector<std::size_t> reference(const std::vector<RankedScore>& all, std::size_t limit) {
  const std::size_t count = all.size();
  std::vector<std::size_t> chosen(count);
  std::iota(chosen.begin(), chosen.end(), 0);
  if (count <= limit) return chosen;
  std::map<double, std::vector<std::size_t>> by_resource;
  for (std::size_t i = 0; i < count; ++i)
    by_resource[all[i].resource].push_back(i);
  std::vector<double> rank(count);
  for (auto& [resource, members] : by_resource) {
    std::stable_sort(members.begin(), members.end(),
                     [&](std::size_t a, std::size_t b) { return all[a].score > all[b].score; });
    for (std::size_t k = 0; k < members.size(); ++k)
      rank[members[k]] = static_cast<double>(k) / static_cast<double>(members.size());
  }
  std::vector<std::size_t> order = chosen;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank[a] < rank[b]; });
  std::vector<bool> keep(count, false);
  for (std::size_t k = 0; k < limit / 2; ++k)
    keep[order[k]] = true;
  std::size_t kept = limit / 2;
  for (std::size_t i = count; i-- > 0 && kept < limit;)
    if (!keep[i]) {
      keep[i] = true;
      ++kept;
    }
  chosen.clear();
  for (std::size_t i = 0; i < count; ++i)
    if (keep[i]) chosen.push_back(i);
  return chosen;
}

// Observations as ASHA makes them, with scores on a coarse grid so that ties are common.
std::vector<RankedScore> stream(std::size_t n, std::uint64_t seed) {
  Xoshiro256 rng(seed);
  const double rungs[] = {1, 3, 9, 27};
  std::vector<RankedScore> out;
  for (std::size_t i = 0; i < n; ++i) {
    const double u = rng.uniform01();
    const double resource = rungs[u < 0.6 ? 0 : u < 0.85 ? 1 : u < 0.95 ? 2 : 3];
    out.push_back({resource, std::floor(rng.uniform01() * 20) - resource});
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_incremental_choice_equals_a_full_sort_at_every_count) {
  for (const std::size_t limit : {8UL, 9UL, 64UL, 200UL})
    for (const std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
      const auto all = stream(1500, seed);
      gp::ObservationChoice choice(limit);
      std::vector<RankedScore> seen;
      for (const auto& o : all) {
        choice.add(o);
        seen.push_back(o);
        const auto expected = reference(seen, limit);
        BOOST_REQUIRE_MESSAGE(choice.chosen() == expected, "limit " << limit << ", seed " << seed
                                                                    << ", " << seen.size()
                                                                    << " observations");
        BOOST_REQUIRE(gp::choose_observations(seen, seen.size(), limit) == expected);
      }
      BOOST_TEST(choice.size() == all.size());
    }
}

BOOST_AUTO_TEST_CASE(a_prefix_is_chosen_as_if_the_rest_had_not_arrived) {
  const auto all = stream(3000, 9);
  for (const std::size_t count : {0UL, 50UL, 64UL, 65UL, 999UL, 3000UL}) {
    const std::vector<RankedScore> prefix(all.begin(), all.begin() + static_cast<long>(count));
    BOOST_TEST(gp::choose_observations(all, count, 64) == reference(prefix, 64));
  }
}

BOOST_AUTO_TEST_CASE(a_diverged_score_ranks_below_every_number) {
  // 10 observations at one resource, the best five kept by rank and the latest five; NaN
  // and -infinity are never among the better half, whatever their place in the stream.
  std::vector<RankedScore> all;
  for (int i = 0; i < 20; ++i)
    all.push_back({1.0, i % 4 == 0 ? NAN : i % 4 == 1 ? -INFINITY : static_cast<double>(i)});
  gp::ObservationChoice choice(10);
  for (const auto& o : all)
    choice.add(o);
  const auto chosen = choice.chosen();
  BOOST_TEST(chosen == gp::choose_observations(all, all.size(), 10));
  // The five best numbers (19, 18, 15, 14, 11) and the five latest others (17, 16, 13, 12, 10).
  BOOST_TEST(chosen == (std::vector<std::size_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  std::vector<RankedScore> early_best = all;
  std::reverse(early_best.begin(), early_best.end());
  gp::ObservationChoice reversed(10);
  for (const auto& o : early_best)
    reversed.add(o);
  // Now the best numbers came first (19 at 0, 18 at 1, 15 at 4, 14 at 5, 11 at 8): kept,
  // with the five latest (15..19), NaN or not.
  BOOST_TEST(reversed.chosen() == (std::vector<std::size_t>{0, 1, 4, 5, 8, 15, 16, 17, 18, 19}));
}
