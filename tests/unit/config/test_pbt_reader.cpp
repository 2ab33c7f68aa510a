#define BOOST_TEST_MODULE config_pbt_reader
#include <boost/test/unit_test.hpp>

#include "config/study_file.hpp"
#include "unit/config/study_text.hpp"

// [scheduler] type = "pbt" and its mutations (src/config/pbt_reader.cpp).
using namespace slurmtune;
using namespace slurmtune::core;
using namespace slurmtune::testing;

namespace {
const std::string kPbtSearch =
    "[search]\nlr = { loguniform = [1e-4, 1e-1] }\nbatch = { choice = [32, 64, 128] }\n"
    "depth = 3\n";
std::string pbt_study(const std::string& scheduler, const std::string& mutations) {
  return kHeader + kPbtSearch + "[scheduler]\ntype = \"pbt\"\nmax_t = 20\n" + scheduler +
         "[scheduler.mutations]\n" + mutations;
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_pbt_scheduler_reads_ray_s_options_and_mutations) {
  const auto s = config::parse_study(
      pbt_study("perturbation_interval = 4\nburn_in_period = 2\nquantile_fraction = 0.5\n"
                "resample_probability = 0\nperturbation_factors = [2, 0.5]\nsynch = true\n",
                "lr = \"resample\"\nbatch = [32, 64]\n"),
      "study.toml");
  BOOST_TEST((s.scheduler.type == SchedulerType::Pbt));
  const auto& p = s.scheduler.pbt;
  BOOST_TEST(p.perturbation_interval == 4);
  BOOST_TEST(p.burn_in_period == 2);
  BOOST_TEST(p.quantile_fraction == 0.5);
  BOOST_TEST(p.resample_probability == 0);
  BOOST_TEST(p.perturbation_factors == (std::vector<double>{2, 0.5}),
             boost::test_tools::per_element());
  BOOST_TEST(p.synch);
  BOOST_REQUIRE(p.mutations.size() == 2u);
  BOOST_TEST(p.mutations[0].name == "lr");  // in [search] order
  BOOST_TEST(p.mutations[0].values.empty());
  BOOST_TEST(p.mutations[1].name == "batch");
  BOOST_TEST(p.mutations[1].values.size() == 2u);
  // Defaults are Ray's.
  const auto d = config::parse_study(
      pbt_study("perturbation_interval = 1\n", "lr = \"resample\"\n"), "study.toml");
  BOOST_TEST(d.scheduler.pbt.quantile_fraction == 0.25);
  BOOST_TEST(d.scheduler.pbt.resample_probability == 0.25);
  BOOST_TEST(d.scheduler.pbt.perturbation_factors == (std::vector<double>{1.2, 0.8}),
             boost::test_tools::per_element());
  BOOST_TEST(!d.scheduler.pbt.synch);
}

BOOST_AUTO_TEST_CASE(pbt_mistakes_are_located) {
  BOOST_TEST(contains(error_of(pbt_study("", "lr = \"resample\"\n")),
                      "[scheduler] perturbation_interval: is required for pbt"));
  BOOST_TEST(contains(
      error_of(kHeader + kPbtSearch + "[scheduler]\ntype = \"pbt\"\nperturbation_interval = 2\n"),
      "[scheduler] mutations: is required for pbt"));
  BOOST_TEST(contains(error_of(pbt_study("perturbation_interval = 2\n", "lrr = \"resample\"\n")),
                      "study.toml:13:7: [scheduler] mutations.lrr: is not a parameter of [search]; "
                      "did you mean 'lr'?"));
  BOOST_TEST(contains(error_of(pbt_study("perturbation_interval = 2\n", "batch = [32, 48]\n")),
                      "study.toml:13:14: [scheduler] mutations.batch: value 48 is not one of its "
                      "[search] domain, choice"));
  BOOST_TEST(
      contains(error_of(pbt_study("perturbation_interval = 2\n", "depth = \"resample\"\n")),
               "mutations.depth: is a constant in [search]; PBT mutates sampled parameters"));
  BOOST_TEST(contains(error_of(pbt_study("perturbation_interval = 2\n", "lr = \"perturb\"\n")),
                      "mutations.lr: must be \"resample\""));
  BOOST_TEST(contains(
      error_of(pbt_study("perturbation_interval = 2\nquantile_fraction = 0.6\n", "lr = [0.01]\n")),
      "[scheduler] quantile_fraction: must be in (0, 0.5]"));
  BOOST_TEST(contains(error_of(pbt_study("perturbation_interval = 2\nperturbation_factors = []\n",
                                         "lr = [0.01]\n")),
                      "[scheduler] perturbation_factors: must list at least one factor"));
  BOOST_TEST(contains(error_of(pbt_study("perturbation_interval = 0\n", "lr = [0.01]\n")),
                      "[scheduler] perturbation_interval: must be a positive number"));
  BOOST_TEST(contains(
      error_of(pbt_study("perturbation_interval = 1\ngrace_period = 1\n", "lr = [0.01]\n")),
      "[scheduler] unknown key 'grace_period'"));
}
