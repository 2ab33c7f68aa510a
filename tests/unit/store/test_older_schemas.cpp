#define BOOST_TEST_MODULE store_older_schemas
// Files of every earlier schema the reader still supports: each reads back, resumes as
// the schema it was written in, and refuses what that schema cannot hold.
#include <boost/test/unit_test.hpp>
#include <string>

#include "core/error.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "unit/store/simulated_study.hpp"
#include "unit/store/store_studies.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using slurmtune::testing::pbt_store_study;
using slurmtune::testing::simulate_into;
using slurmtune::testing::store_study;
using TempDir = slurmtune::testing::TempFolder;

namespace {

// One resumed session that records nothing: the writer opens the file, flushes, and closes.
void resume_once(const std::string& path, const core::StudySpec& s) {
  store::WriterOptions options;
  options.virtual_clock = true;
  auto writer = store::StudyWriter::reopen(path, s, options, {});
  writer->flush();
}

}  // namespace

BOOST_AUTO_TEST_CASE(older_schemas_stay_readable_and_resumable) {
  // A schema-2 file (before /exploits): read back in full, resumed, and still schema 2.
  TempDir dir;
  const auto s = store_study();
  simulate_into(dir.file("v2.h5"), s, 8, 2);
  {
    const store::StudyReader reader(dir.file("v2.h5"));
    BOOST_TEST(reader.schema_version() == 2);
    BOOST_TEST(!reader.layout().has_exploits());
    BOOST_TEST(reader.exploits().empty());
    BOOST_TEST(reader.trials().size() == 400U);
    BOOST_TEST(reader.layout().has_suggestions());
  }
  resume_once(dir.file("v2.h5"), s);
  const store::StudyReader reopened(dir.file("v2.h5"));
  BOOST_TEST(reopened.schema_version() == 2);
  BOOST_TEST(reopened.sessions().size() == 2U);
  // A pbt study cannot be recorded into a file without /exploits.
  const auto pbt = pbt_store_study();
  BOOST_CHECK_THROW(simulate_into(dir.file("pbt-v2.h5"), pbt, 4, 2), UsageError);
}

BOOST_AUTO_TEST_CASE(each_commit_records_the_loop_figures_and_a_schema_8_file_none) {
  // Schema 9: /commit carries the coordinator loop's figures as of the flush; a
  // simulation leaves them zero (no turns), and a schema-8 file resumed records none.
  TempDir dir;
  const auto s = store_study();
  simulate_into(dir.file("v9.h5"), s, 2, store::kSchemaVersion);
  {
    const store::StudyReader reader(dir.file("v9.h5"));
    BOOST_TEST(reader.layout().has_loop_figures());
    BOOST_REQUIRE(reader.committed().loop.has_value());
    BOOST_TEST(reader.committed().loop->turns == 0U);
  }
  store::WriterOptions options;
  options.virtual_clock = true;
  {
    auto writer = store::StudyWriter::reopen(dir.file("v9.h5"), s, options, {});
    core::LoopFigures figures;
    figures.recent_longest_ms = 12.5;
    figures.recent_work = core::LoopWork::Suggestions;
    figures.recent_busy = 0.25;
    figures.longest_ms = 140;
    figures.longest_work = core::LoopWork::Checkpoints;
    figures.turns = 9000;
    figures.over_10ms = 30;
    figures.over_100ms = 2;
    figures.over_1s = 0;
    writer->set_loop_figures(figures);
    writer->flush();
    const store::StudyReader reader(dir.file("v9.h5"));  // as the writer goes on (SWMR)
    BOOST_REQUIRE(reader.committed().loop.has_value());
    const auto& loop = *reader.committed().loop;
    BOOST_TEST(loop.recent_longest_ms == 12.5);
    BOOST_TEST((loop.recent_work == core::LoopWork::Suggestions));
    BOOST_TEST(loop.recent_busy == 0.25);
    BOOST_TEST(loop.longest_ms == 140.0);
    BOOST_TEST((loop.longest_work == core::LoopWork::Checkpoints));
    BOOST_TEST(loop.turns == 9000U);
    BOOST_TEST(loop.over_10ms == 30U);
    BOOST_TEST(loop.over_100ms == 2U);
    BOOST_TEST(loop.over_1s == 0U);
  }
  simulate_into(dir.file("v8.h5"), s, 2, 8);
  {
    auto writer = store::StudyWriter::reopen(dir.file("v8.h5"), s, options, {});
    writer->set_loop_figures(
        core::LoopFigures{1, core::LoopWork::Messages, 1, 1, core::LoopWork::Messages, 1, 0, 0, 0});
    writer->flush();
  }
  const store::StudyReader v8(dir.file("v8.h5"));
  BOOST_TEST(v8.schema_version() == 8);
  BOOST_TEST(!v8.layout().has_loop_figures());
  BOOST_TEST(!v8.committed().loop.has_value());
}

BOOST_AUTO_TEST_CASE(a_schema_5_file_reads_and_resumes_without_schema_6s_additions) {
  // Schema 6 added `enqueued` to /trials.origin and active/<name> columns: a schema-5 file
  // (origin of four names) reads back and resumes as schema 5.
  TempDir dir;
  const auto s = store_study();
  simulate_into(dir.file("v5.h5"), s, 8, 5);
  {
    const store::StudyReader reader(dir.file("v5.h5"));
    BOOST_TEST(reader.schema_version() == 5);
    BOOST_TEST(reader.trials().size() == 400U);
    // The same columns as schema 9 (this study has no conditional parameter); schema 10
    // added best_seq and objective/loss, schema 11 last_time.
    BOOST_TEST(reader.layout().trials.fields().size() ==
               store::StudyLayout(s, 9).trials.fields().size());
    BOOST_TEST(store::StudyLayout(s, 10).trials.fields().size() ==
               store::StudyLayout(s, 9).trials.fields().size() + 2);
    BOOST_TEST(store::StudyLayout(s, 11).trials.fields().size() ==
               store::StudyLayout(s, 10).trials.fields().size() + 1);
  }
  resume_once(dir.file("v5.h5"), s);
  const store::StudyReader reopened(dir.file("v5.h5"));
  BOOST_TEST(reopened.schema_version() == 5);
  BOOST_TEST(reopened.sessions().size() == 2U);
}

BOOST_AUTO_TEST_CASE(a_schema_6_file_has_one_objective_and_no_objectives_attribute) {
  // Schema 7 added the root attributes objectives, modes and constraints: a schema-6
  // file has none, its one objective is metric and mode, and it resumes as schema 6.
  TempDir dir;
  const auto s = store_study();
  simulate_into(dir.file("v6.h5"), s, 8, 6);
  {
    const store::StudyReader reader(dir.file("v6.h5"));
    BOOST_TEST(reader.schema_version() == 6);
    BOOST_TEST(!reader.has_attribute("objectives"));
    BOOST_TEST(reader.spec().objectives.size() == 1U);
    BOOST_TEST(reader.spec().objectives[0].metric == s.metric);
  }
  resume_once(dir.file("v6.h5"), s);
  const store::StudyReader reopened(dir.file("v6.h5"));
  BOOST_TEST(reopened.schema_version() == 6);
  BOOST_TEST(!reopened.has_attribute("objectives"));
  simulate_into(dir.file("v7.h5"), s, 2, store::kSchemaVersion);
  const store::StudyReader fresh(dir.file("v7.h5"));
  BOOST_TEST(fresh.has_attribute("objectives"));
  BOOST_TEST(fresh.has_attribute("modes"));
  BOOST_TEST(!fresh.has_attribute("constraints"));  // the study has none
}

BOOST_AUTO_TEST_CASE(a_schema_3_file_reads_resumes_and_refuses_paths_it_cannot_hold) {
  // Schema 4 widened /checkpoints.path; a schema-3 file keeps its 256-byte field, so a
  // resumed writer refuses a longer path instead of cutting it.
  TempDir dir;
  const auto s = store_study();
  simulate_into(dir.file("v3.h5"), s, 8, 3);
  {
    const store::StudyReader reader(dir.file("v3.h5"));
    BOOST_TEST(reader.schema_version() == 3);
    BOOST_TEST(reader.trials().size() == 400U);
  }
  {
    store::WriterOptions options;
    options.virtual_clock = true;
    auto writer = store::StudyWriter::reopen(dir.file("v3.h5"), s, options, {});
    BOOST_TEST(writer->max_checkpoint_path() == 255U);
    BOOST_CHECK_THROW(writer->checkpoint(0, 1, 0, std::string(300, 'p'), 1), InputError);
    writer->checkpoint(0, 1, 0, "study.trials/trial-0/state.h5", 1);
    writer->flush();
  }
  const store::StudyReader reopened(dir.file("v3.h5"));
  BOOST_TEST(reopened.schema_version() == 3);
  BOOST_TEST(reopened.checkpoints().back().path == "study.trials/trial-0/state.h5");
  // A new file holds whole paths.
  simulate_into(dir.file("v4.h5"), s, 2, store::kSchemaVersion);
  store::WriterOptions options;
  options.virtual_clock = true;
  auto writer = store::StudyWriter::reopen(dir.file("v4.h5"), s, options, {});
  BOOST_TEST(writer->max_checkpoint_path() == 4095U);
  const std::string long_path = "study.trials/trial-0/" + std::string(400, 'q');
  writer->checkpoint(0, 1, 0, long_path, 1);
  writer->flush();
  writer.reset();
  BOOST_TEST(store::StudyReader(dir.file("v4.h5")).checkpoints().back().path == long_path);
}
