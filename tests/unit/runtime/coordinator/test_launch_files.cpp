// New trials' files made ahead off the coordinator's loop (issue #62): each trial's
// folder and its first launch's credential (mode 0600, the credential the control server
// expects of launch 1), a batch at a time and at most two ahead, the size of a stderr.log
// already there, nothing past the trial cap, nothing left of the unused ones at the end.
#define BOOST_TEST_MODULE runtime_launch_files
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "protocol/credentials.hpp"
#include "protocol/wire/secret.hpp"
#include "runtime/control/background_work.hpp"
#include "runtime/control/credential_files.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/coordinator/launch_files.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {

const std::string kSecret = "0123456789abcdef0123456789abcdef";

struct Fixture {
  slurmtune::testing::TempFolder dir{"launch-files"};
  std::string trials = dir.file("study.trials");
  EventLoop loop;
  BackgroundWork work{loop};
  CredentialFiles credentials{trials + "/credentials", kSecret};
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_batch_makes_folders_and_first_credentials_ahead, Fixture) {
  LaunchFiles files(TrialFolders{trials, {}}, credentials, work, 1000);
  fs::create_directories(trials + "/trial-5");
  std::ofstream(trials + "/trial-5/stderr.log") << "an earlier session's line\n";
  files.keep_ahead(0);
  work.drain();
  const auto first = files.take(0);
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(fs::is_directory(trials + "/trial-0"));
  BOOST_TEST(first->stderr_offset == 0U);
  BOOST_TEST(protocol::read_token_file(first->credential_file) ==
             protocol::attempt_credential(kSecret, 0, 0, LaunchFiles::kFirstLaunch));
  struct stat mode {};
  BOOST_REQUIRE(::stat(first->credential_file.c_str(), &mode) == 0);
  BOOST_TEST((mode.st_mode & 0777) == 0600U);
  BOOST_TEST(files.take(5)->stderr_offset == 26U);
  BOOST_TEST(!files.take(0).has_value());  // taken once
  // One batch ahead of the next new trial, then the next as the trials start.
  BOOST_TEST(files.take(LaunchFiles::kBatch - 1).has_value());
  BOOST_TEST(!files.take(LaunchFiles::kBatch).has_value());
  BOOST_TEST(!fs::exists(trials + "/trial-" + std::to_string(LaunchFiles::kBatch)));
  files.keep_ahead(10);
  work.drain();
  BOOST_TEST(files.take(LaunchFiles::kBatch).has_value());
  BOOST_TEST(!fs::exists(trials + "/trial-" + std::to_string(2 * LaunchFiles::kBatch)));
  BOOST_TEST(files.made_ahead() == 4U);
}

// The coordinator's window: as many trials as run at once, in whole batches.
BOOST_FIXTURE_TEST_CASE(a_window_keeps_the_first_wave_made, Fixture) {
  const std::uint64_t wave = LaunchFiles::kBatch + 10;
  LaunchFiles files(TrialFolders{trials, {}}, credentials, work, 10 * LaunchFiles::kBatch, wave);
  files.keep_ahead(0);
  work.drain();
  BOOST_TEST(files.take(wave).has_value());
  BOOST_TEST(files.take(2 * LaunchFiles::kBatch - 1).has_value());
  BOOST_TEST(!fs::exists(trials + "/trial-" + std::to_string(2 * LaunchFiles::kBatch)));
}

BOOST_FIXTURE_TEST_CASE(nothing_past_the_cap_and_nothing_unused_left_at_the_end, Fixture) {
  LaunchFiles files(TrialFolders{trials, {}}, credentials, work, 4);
  fs::create_directories(trials + "/trial-2");
  std::ofstream(trials + "/trial-2/stdout.log") << "kept\n";
  files.keep_ahead(0);
  files.keep_ahead(1);
  work.drain();
  BOOST_TEST(!fs::exists(trials + "/trial-4"));
  const auto used = files.take(0);
  BOOST_REQUIRE(used.has_value());
  // Trials 0 and 1 started (1 made its own files, its batch being late); 2 and 3 never did.
  files.finish(2);
  BOOST_TEST(fs::exists(used->credential_file));  // a launch's: its end removes it
  BOOST_TEST(fs::is_directory(trials + "/trial-0"));
  BOOST_TEST(fs::is_directory(trials + "/trial-1"));       // started: its folder stays
  BOOST_TEST(fs::exists(trials + "/trial-2/stdout.log"));  // not empty: left
  BOOST_TEST(!fs::exists(trials + "/trial-3"));            // made, never used, empty
  for (const int unused : {1, 2, 3})
    BOOST_TEST(!fs::exists(trials + "/credentials/trial-" + std::to_string(unused) + ".launch-1"));
}

// A batch that cannot make a trial's files leaves them to its launch, which says why.
BOOST_FIXTURE_TEST_CASE(what_a_batch_cannot_make_is_left_to_the_launch, Fixture) {
  std::ofstream(trials + "/trial-1") << "a file where the folder goes\n";
  LaunchFiles files(TrialFolders{trials, {}}, credentials, work, 3);
  files.keep_ahead(0);
  work.drain();
  BOOST_TEST(files.take(0).has_value());
  BOOST_TEST(!files.take(1).has_value());
  BOOST_TEST(files.take(2).has_value());
}

// With [checkpoints] folder, a batch also makes each trial's folder there (its user's
// only), and the session's end removes those of trials that never started.
BOOST_FIXTURE_TEST_CASE(a_batch_makes_the_checkpoint_folders_too, Fixture) {
  const std::string scratch = dir.file("scratch");
  fs::create_directories(scratch);
  LaunchFiles files(TrialFolders{trials, scratch}, credentials, work, 3);
  files.keep_ahead(0);
  work.drain();
  BOOST_TEST(files.take(0).has_value());
  BOOST_TEST(fs::is_directory(scratch + "/trial-0"));
  struct stat mode {};
  BOOST_REQUIRE(::stat((scratch + "/trial-2").c_str(), &mode) == 0);
  BOOST_TEST((mode.st_mode & 0777) == 0700U);
  files.finish(1);
  BOOST_TEST(fs::is_directory(scratch + "/trial-0"));
  BOOST_TEST(!fs::exists(scratch + "/trial-2"));
}

BOOST_FIXTURE_TEST_CASE(a_relaunch_gets_its_files_off_the_loop_under_a_launch_number_of_its_own,
                        Fixture) {
  LaunchFiles files(TrialFolders{trials, {}}, credentials, work, 1000);
  fs::create_directories(trials + "/trial-3");
  std::ofstream(trials + "/trial-3/stderr.log") << "attempt 0 said this\n";
  bool ready = false;
  files.make_relaunch(3, 1, [&] { ready = true; });
  BOOST_TEST(!ready);  // the helper thread makes them; the loop hears of it
  work.drain();
  BOOST_TEST(ready);
  const auto made = files.take_relaunch(3, 1);
  BOOST_REQUIRE(made.has_value());
  BOOST_TEST(made->launch > LaunchFiles::kFirstLaunch);
  BOOST_TEST(made->stderr_offset == 20U);
  BOOST_TEST(protocol::read_token_file(made->credential_file) ==
             protocol::attempt_credential(kSecret, 3, 1, made->launch));
  struct stat mode {};
  BOOST_REQUIRE(::stat(made->credential_file.c_str(), &mode) == 0);
  BOOST_TEST((mode.st_mode & 0777) == 0600U);
  BOOST_TEST(!files.take_relaunch(3, 1).has_value());  // taken once
  BOOST_TEST(files.next_launch() > made->launch);      // numbers are never handed out twice
  // Made for another attempt than the one that launches: not handed over, and removed.
  const std::string made_dir = trials + "/credentials";
  const auto count = [&] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(made_dir))
      ++n;
    return n;
  };
  files.make_relaunch(4, 0, [] {});
  work.drain();
  const std::size_t with_stale = count();
  BOOST_TEST(!files.take_relaunch(4, 1).has_value());
  work.drain();
  BOOST_TEST(count() + 1 == with_stale);
  // What the session did not take is removed at its end.
  files.make_relaunch(5, 0, [] {});
  work.drain();
  const std::size_t with_unused = count();
  files.finish(6);
  BOOST_TEST(count() + 1 == with_unused);
}

// Every trial starts on a worker step, which derives its attempts' credentials: the files
// are made as before, with no credential among them, and nothing is written to the
// session's credentials folder.
BOOST_FIXTURE_TEST_CASE(without_credentials_no_launch_writes_one, Fixture) {
  LaunchFiles files(TrialFolders{trials, {}}, std::nullopt, work, 3);
  files.keep_ahead(0);
  files.make_relaunch(1, 1, [] {});
  work.drain();
  const auto first = files.take(0);
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(first->credential_file.empty());
  BOOST_TEST(fs::is_directory(trials + "/trial-0"));
  const auto relaunch = files.take_relaunch(1, 1);
  BOOST_REQUIRE(relaunch.has_value());
  BOOST_TEST(relaunch->credential_file.empty());
  BOOST_TEST(make_launch_files(TrialFolders{trials, {}}, nullptr, 2, 0, files.next_launch())
                 .credential_file.empty());
  BOOST_TEST(fs::is_empty(trials + "/credentials"));
  files.finish(3);
}
