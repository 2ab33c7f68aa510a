#define BOOST_TEST_MODULE store_older_defaults
// Files written under an older default (the default sampler, TPE's semantics, launch
// waves, a prior's trusted trials, start-up and checks): a study file that names none of
// them is refused as it is, and resumes once it takes what the file recorded.
#include <boost/test/unit_test.hpp>
#include <string>

#include "config/study_file.hpp"
#include "core/error.hpp"
#include "core/search/sampler_spec.hpp"
#include "store/file/hdf5.hpp"
#include "store/resume.hpp"
#include "store/study_reader.hpp"
#include "store/warm_start.hpp"
#include "unit/store/simulated_study.hpp"
#include "unit/store/store_studies.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using slurmtune::testing::kStoreStudy;
using slurmtune::testing::simulate_into;
using slurmtune::testing::store_study;

namespace {

// A fresh directory per test case, removed afterwards.
using TempDir = slurmtune::testing::TempFolder;

// A file written under an older default: `now` (a study file that names none) is refused
// as it is, and resumes once it takes what the file recorded. Returns the resumed study.
core::StudySpec resumes_only_as_recorded(const store::StudyReader& reader,
                                         const core::StudySpec& now) {
  BOOST_CHECK_THROW(store::resume_study(reader, now, {}), InputError);
  auto resumed = store::with_recorded_defaults(now, reader.spec());
  BOOST_TEST(store::compare_studies(reader.spec(), resumed).empty());
  BOOST_CHECK_NO_THROW(store::resume_study(reader, resumed, {}));
  return resumed;
}

// kStoreStudy cut to 24 trials: what these cases check is what a file records, and 400
// trials of MOBSTER take minutes under the sanitizers.
std::string small_store_study() {
  std::string text = kStoreStudy;
  text.replace(text.find("max_trials = 400"), std::string("max_trials = 400").size(),
               "max_trials = 24");
  return text;
}

// kStoreStudy cut to 24 trials of MOBSTER with `[sampler] prior = [past]`, its scheduler's
// type line replaced by `scheduler` (the type and any keys after it), then `extra`
// ([sampler] keys), parsed with the prior's file read.
core::StudySpec study_with_prior(const std::string& past, const std::string& scheduler,
                                 const std::string& extra) {
  std::string text = small_store_study();
  text.replace(text.find("type = \"asha\""), std::string("type = \"asha\"").size(), scheduler);
  text.replace(text.find("[search]"), 0, "sampler = \"mobster\"\n");
  text += "[sampler]\nprior = [\"" + past + "\"]\n" + extra;
  auto study = config::parse_study(text, "study.toml");
  store::load_warm_start(study);
  return study;
}

// `path` as a writer that did not know a key wrote it: `line` taken out of its resolved study.
void erase_from_resolved_study(const std::string& path, const std::string& line) {
  const store::Hid file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
  BOOST_REQUIRE(file.valid());
  std::string resolved = *store::read_string_attribute(file, "resolved_study");
  const auto at = resolved.find(line);
  BOOST_REQUIRE(at != std::string::npos);
  resolved.erase(at, line.size());
  store::write_string_attribute(file, "resolved_study", resolved);
}

}  // namespace

// Issue #43 item 6: a file written when a study naming no sampler got random resumes with
// random after the default changed; a study naming its sampler is held to it.
BOOST_AUTO_TEST_CASE(a_file_of_the_old_default_sampler_resumes_with_the_sampler_it_recorded) {
  TempDir dir;
  const std::string promotion =
      std::string(kStoreStudy)
          .replace(std::string(kStoreStudy).find("\"asha\""), 6, "\"asha_promotion\"");
  const auto old_default = config::parse_study(
      std::string(promotion).replace(promotion.find("[search]"), 0, "sampler = \"random\"\n"),
      "study.toml");
  simulate_into(dir.file("old.h5"), old_default);
  const store::StudyReader reader(dir.file("old.h5"));
  const auto now = config::parse_study(promotion, "study.toml");
  BOOST_REQUIRE((now.sampler.kind == core::SamplerKind::Mobster));
  const auto resumed = resumes_only_as_recorded(reader, now);
  BOOST_TEST((resumed.sampler.kind == core::SamplerKind::Random));
  // Named in the study file: no adoption, and resume says what differs.
  const auto named = config::parse_study(
      std::string(promotion).replace(promotion.find("[search]"), 0, "sampler = \"mobster\"\n"),
      "study.toml");
  BOOST_TEST((store::with_recorded_defaults(named, reader.spec()).sampler.kind ==
              core::SamplerKind::Mobster));
}

// tpe's default semantics became "auto" (issue #62): a file written when the default was
// "optuna" resumes with it when the study file gives none, and is held to one it gives.
BOOST_AUTO_TEST_CASE(a_file_of_the_old_tpe_semantics_resumes_with_what_it_recorded) {
  TempDir dir;
  const std::string tpe =
      std::string(kStoreStudy)
          .replace(std::string(kStoreStudy).find("[search]"), 0, "sampler = \"tpe\"\n");
  const auto old_default =
      config::parse_study(tpe + "\n[sampler]\nsemantics = \"optuna\"\n", "study.toml");
  simulate_into(dir.file("old.h5"), old_default);
  const store::StudyReader reader(dir.file("old.h5"));
  const auto now = config::parse_study(tpe, "study.toml");
  BOOST_REQUIRE(now.sampler.tpe.binned_from == core::tpe::TpeOptions::auto_binned_from);
  BOOST_TEST(resumes_only_as_recorded(reader, now).sampler.tpe.bins == 0u);
  const auto named = config::parse_study(tpe + "\n[sampler]\nsemantics = \"auto\"\n", "study.toml");
  BOOST_TEST(store::with_recorded_defaults(named, reader.spec()).sampler.tpe.bins == 128u);
}

// Launch waves came in with issue #61: a file whose resolved study has no `wave` was
// written before them and resumes without them when the study file gives none.
BOOST_AUTO_TEST_CASE(a_file_written_before_launch_waves_resumes_without_them) {
  TempDir dir;
  std::string mobster = small_store_study();
  mobster.replace(mobster.find("[search]"), 0, "sampler = \"mobster\"\n");
  const auto study = config::parse_study(mobster, "study.toml");
  BOOST_REQUIRE(study.sampler.mobster.wave == 64u);
  simulate_into(dir.file("old.h5"), study);
  // The resolved study as a writer before waves recorded it: every option but `wave`.
  erase_from_resolved_study(dir.file("old.h5"), "wave = 64\n");
  const store::StudyReader reader(dir.file("old.h5"));
  BOOST_TEST(reader.spec().sampler.mobster.wave == 0u);
  BOOST_TEST(resumes_only_as_recorded(reader, study).sampler.mobster.wave == 0u);
  // Given in the study file: held to it, and resume says what differs.
  const auto named = config::parse_study(mobster + "\n[sampler]\nwave = 8\n", "study.toml");
  BOOST_TEST(store::with_recorded_defaults(named, reader.spec()).sampler.mobster.wave == 8u);
  // A file written with waves keeps its own.
  simulate_into(dir.file("new.h5"), study);
  const store::StudyReader current(dir.file("new.h5"));
  BOOST_TEST(current.spec().sampler.mobster.wave == 64u);
  BOOST_TEST(store::with_recorded_defaults(study, current.spec()).sampler.mobster.wave == 64u);
}

// A prior's earlier best are trusted since issue #64 (trusted_trials, written wherever it
// or its default is not 0): a file whose resolved study has none judged them at the rungs
// and resumes so when the study file gives none.
BOOST_AUTO_TEST_CASE(a_file_written_before_trusted_trials_resumes_without_them) {
  TempDir dir;
  std::string promotion = small_store_study();
  promotion.replace(promotion.find("type = \"asha\""), std::string("type = \"asha\"").size(),
                    "type = \"asha_promotion\"\ntrusted_trials = 2");
  const auto trusting = config::parse_study(promotion, "study.toml");
  BOOST_REQUIRE(trusting.scheduler.trusted_trials.value_or(-1) == 2);
  simulate_into(dir.file("old.h5"), trusting);
  // The resolved study as a writer before trust recorded it.
  erase_from_resolved_study(dir.file("old.h5"), "trusted_trials = 2\n");
  const store::StudyReader reader(dir.file("old.h5"));
  BOOST_TEST(reader.spec().scheduler.trusted_trials.value_or(-1) == 0);
  // A study file that names none, whose default with a prior is 2.
  auto now = config::parse_study(promotion.replace(promotion.find("trusted_trials = 2"),
                                                   std::string("trusted_trials = 2").size(), ""),
                                 "study.toml");
  BOOST_REQUIRE(!now.scheduler.trusted_trials_named);
  now.scheduler.trusted_trials = 2;
  BOOST_TEST(
      store::with_recorded_defaults(now, reader.spec()).scheduler.trusted_trials.value_or(-1) == 0);
  // Named in the study file: held to it.
  BOOST_TEST(store::with_recorded_defaults(trusting, reader.spec())
                 .scheduler.trusted_trials.value_or(-1) == 2);
  // A file written with trust keeps its own.
  simulate_into(dir.file("new.h5"), trusting);
  BOOST_TEST(store::StudyReader(dir.file("new.h5")).spec().scheduler.trusted_trials.value_or(-1) ==
             2);
}

// A prior's start-up defaults changed on 2026-12-04 (prior_exact 2 to 5, prior_startup every
// start-up to 10, written with every prior since): a file whose resolved study has no
// prior_startup drew every start-up from the prior, and resumes so, with the prior_exact it
// recorded, when the study file gives neither.
BOOST_AUTO_TEST_CASE(a_file_written_before_the_prior_start_up_defaults_resumes_with_its_own) {
  TempDir dir;
  simulate_into(dir.file("past.h5"), store_study());
  const auto with_prior = [&](const std::string& extra) {
    return study_with_prior(dir.file("past.h5"), "type = \"asha\"", extra);
  };
  const auto now = with_prior("");
  BOOST_TEST(now.sampler.mobster.prior_exact == 5u);
  BOOST_TEST(now.sampler.mobster.prior_startup.value_or(0) == 10u);
  BOOST_TEST(with_prior("prior_exact = 12\n").sampler.mobster.prior_startup.value_or(0) == 17u);
  // The resolved study as a writer before 2026-12-04 recorded it: prior_exact 2, and no
  // prior_startup.
  simulate_into(dir.file("old.h5"), with_prior("prior_exact = 2\n"));
  erase_from_resolved_study(dir.file("old.h5"), "prior_startup = 10\n");
  const store::StudyReader reader(dir.file("old.h5"));
  BOOST_TEST(!reader.spec().sampler.mobster.prior_startup.has_value());
  const auto resumed = resumes_only_as_recorded(reader, now);
  BOOST_TEST(resumed.sampler.mobster.prior_exact == 2u);
  BOOST_TEST(!resumed.sampler.mobster.prior_startup.has_value());
  // Named in the study file: held to it.
  const auto named = store::with_recorded_defaults(
      with_prior("prior_exact = 5\nprior_startup = 10\n"), reader.spec());
  BOOST_TEST(named.sampler.mobster.prior_exact == 5u);
  BOOST_TEST(named.sampler.mobster.prior_startup.value_or(0) == 10u);
  // A file written since keeps its own.
  simulate_into(dir.file("new.h5"), now);
  const store::StudyReader current(dir.file("new.h5"));
  BOOST_TEST(current.spec().sampler.mobster.prior_startup.value_or(0) == 10u);
  BOOST_TEST(store::compare_studies(current.spec(), now).empty());
  // Resolved for 32 trials at once: recorded so, and a resume on an allocation of another
  // size goes on with it (its suggestions were made with it).
  auto wide = now;
  core::resolve_prior_start(wide.sampler, 32);
  simulate_into(dir.file("wide.h5"), wide);
  const store::StudyReader wide_reader(dir.file("wide.h5"));
  BOOST_TEST(wide_reader.spec().sampler.mobster.prior_exact == 16u);
  auto again = store::with_recorded_defaults(now, wide_reader.spec());
  core::resolve_prior_start(again.sampler, 4);
  BOOST_TEST(again.sampler.mobster.prior_exact == 16u);
  BOOST_TEST(again.sampler.mobster.prior_startup.value_or(0) == 21u);
  BOOST_TEST(store::compare_studies(wide_reader.spec(), again).empty());
}

// prior_check and asha_promotion's trust_check are on with a prior since 2026-12-04 (written
// with every prior since): a file whose resolved study has neither ran without them, and
// resumes so when the study file gives neither.
BOOST_AUTO_TEST_CASE(a_file_written_before_the_prior_s_checks_resumes_without_them) {
  TempDir dir;
  simulate_into(dir.file("past.h5"), store_study());
  const auto with_prior = [&](const std::string& extra, const std::string& scheduler = "") {
    return study_with_prior(dir.file("past.h5"), "type = \"asha_promotion\"" + scheduler, extra);
  };
  const auto now = with_prior("");
  BOOST_TEST(now.sampler.mobster.prior_check);
  BOOST_TEST(now.scheduler.trust_check);
  // A study run without the checks, its resolved study as a writer before 2026-12-04
  // recorded it (neither key).
  simulate_into(dir.file("old.h5"), with_prior("prior_check = false\n", "\ntrust_check = false"));
  erase_from_resolved_study(dir.file("old.h5"), "prior_check = false\n");
  erase_from_resolved_study(dir.file("old.h5"), "trust_check = false\n");
  const store::StudyReader reader(dir.file("old.h5"));
  BOOST_TEST(!reader.spec().sampler.mobster.prior_check);
  BOOST_TEST(!reader.spec().scheduler.trust_check);
  const auto resumed = resumes_only_as_recorded(reader, now);
  BOOST_TEST(!resumed.sampler.mobster.prior_check);
  BOOST_TEST(!resumed.scheduler.trust_check);
  // Named in the study file (the sampler's key; the scheduler's is read the same way): held
  // to it.
  const auto named =
      store::with_recorded_defaults(with_prior("prior_check = true\n"), reader.spec());
  BOOST_TEST(named.sampler.mobster.prior_check);
  // Turned off by the study file: written off, and kept.
  const auto off = with_prior("prior_check = false\n");
  BOOST_TEST(!off.sampler.mobster.prior_check);
  simulate_into(dir.file("off.h5"), off);
  BOOST_TEST(!store::StudyReader(dir.file("off.h5")).spec().sampler.mobster.prior_check);
  // A file written since keeps its own.
  simulate_into(dir.file("new.h5"), now);
  const store::StudyReader current(dir.file("new.h5"));
  BOOST_TEST(current.spec().sampler.mobster.prior_check);
  BOOST_TEST(current.spec().scheduler.trust_check);
  BOOST_TEST(store::compare_studies(current.spec(), now).empty());
}
