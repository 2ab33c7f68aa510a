#define BOOST_TEST_MODULE config_default_sampler
// Issue #43 item 6: the sampler a study that names none gets, and what it records.
#include <boost/test/unit_test.hpp>

#include "config/study_file.hpp"

using namespace slurmtune;
using namespace slurmtune::core;

namespace {

// A study of `scheduler` (of one objective unless `study_extra` gives a metric), with
// `study_extra` in [study], `search_extra` in [search] and `tail` after [scheduler].
StudySpec study(const std::string& scheduler, const std::string& study_extra = "",
                const std::string& search_extra = "", const std::string& tail = "") {
  const std::string objective =
      study_extra.find("metric =") != std::string::npos ? "" : "metric = \"loss\"\n";
  return config::parse_study("[study]\nname = \"s\"\n" + objective + study_extra +
                                 "[search]\nlr = { loguniform = [1e-4, 1e-1] }\n"
                                 "opt = { choice = [\"sgd\", \"adam\"] }\n" +
                                 search_extra + "[scheduler]\ntype = \"" + scheduler +
                                 "\"\nmax_t = 27\n" + tail,
                             "study.toml");
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_asha_promotion_study_naming_none_gets_mobster_with_hyper_tune) {
  const auto s = study("asha_promotion");
  BOOST_TEST((s.sampler.kind == SamplerKind::Mobster));
  BOOST_TEST((s.sampler.mobster.rung_weighting == RungWeighting::HyperTune));
  BOOST_TEST(!s.sampler.named);
  // [sampler] options configure the default's without naming it.
  const auto tuned =
      study("asha_promotion", "", "", "[sampler]\nrung_weighting = \"first-rung\"\n");
  BOOST_TEST((tuned.sampler.kind == SamplerKind::Mobster));
  BOOST_TEST((tuned.sampler.mobster.rung_weighting == RungWeighting::FirstRung));
}

BOOST_AUTO_TEST_CASE(random_stays_where_the_model_was_not_measured_or_cannot_serve) {
  for (const char* scheduler : {"fifo", "asha", "hyperband", "median"})
    BOOST_TEST((study(scheduler).sampler.kind == SamplerKind::Random), scheduler);
  // Several objectives, constraints, a grid axis: MOBSTER takes none of them. Several
  // objectives are refused for the scheduler's reason, not for a sampler never named.
  try {
    study("asha_promotion", "metric = [\"loss\", \"acc\"]\nmode = [\"min\", \"max\"]\n");
    BOOST_ERROR("asha_promotion took two objectives");
  } catch (const config::StudyFileError& e) {
    BOOST_TEST(std::string(e.what()).find("judges one metric") != std::string::npos, e.what());
  }
  BOOST_TEST((
      study("asha_promotion", "metrics = [\"mem\"]\nconstraints = [\"mem <= 4\"]\n").sampler.kind ==
      SamplerKind::Random));
  BOOST_TEST((study("asha_promotion", "", "layers = { grid = [2, 4] }\n").sampler.kind ==
              SamplerKind::Random));
  // A named sampler is kept, and the random default still refuses options.
  const auto named = study("asha_promotion", "sampler = \"random\"\n");
  BOOST_TEST((named.sampler.kind == SamplerKind::Random));
  BOOST_TEST(named.sampler.named);
  BOOST_CHECK_THROW(study("fifo", "", "", "[sampler]\nn_startup_trials = 3\n"),
                    config::StudyFileError);
}

BOOST_AUTO_TEST_CASE(the_resolved_study_names_the_default_it_got) {
  // The results file records the resolved study: read back, it names the sampler, so a
  // later change of the default cannot change what a resumed study runs.
  const auto resolved = config::parse_study(config::to_toml(study("asha_promotion")), "resolved");
  BOOST_TEST((resolved.sampler.kind == SamplerKind::Mobster));
  BOOST_TEST((resolved.sampler.mobster.rung_weighting == RungWeighting::HyperTune));
  BOOST_TEST(resolved.sampler.named);
}
