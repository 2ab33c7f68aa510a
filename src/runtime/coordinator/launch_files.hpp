#pragma once
// The files of new trials' first launches, made ahead in batches on the helper thread
// (issue #62): a trial's folder, its credential file and the size of any stderr.log
// already there were five metadata operations on the study's file system per launch, on
// the coordinator's loop, and on a parallel file system each takes a millisecond or
// more: a burst of 16,384 launches held every report for many seconds. A new trial's
// first launch has a credential known ahead (launch number 1: the coordinator numbers
// every other launch from 2), so nothing of it waits for the launch. A launch whose
// files are not ready yet, and every relaunch, makes them on the loop as before, under
// a launch number of its own (the batch may be writing launch 1's file at that moment).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/trial_id.hpp"
#include "runtime/control/background_work.hpp"
#include "runtime/control/credential_files.hpp"
#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {

/// What a new trial's first launch needs of the file system, made ahead.
struct LaunchFilesReady {
  std::string credential_file;       ///< "": none made (the worker that starts it derives it)
  std::uintmax_t stderr_offset = 0;  ///< the size of a stderr.log the folder already had
  std::uint64_t launch = 1;          ///< the launch number its credential is for
  std::uint64_t attempt = 0;         ///< ... and the attempt
};

/// An attempt's files under launch number `launch`: its folder (there already, as a rule)
/// and its [checkpoints] folder's (0700), its credential (none when `credentials` is
/// null: workers derive them), and its stderr.log's size. Throws what the file system
/// said. A relaunch's are made so on the helper thread (LaunchFiles::make_relaunch); a
/// launch that finds none made calls it on the loop.
LaunchFilesReady make_launch_files(const TrialFolders& folders, const CredentialFiles* credentials,
                                   core::TrialId trial, std::uint64_t attempt,
                                   std::uint64_t launch);

class LaunchFiles {
 public:
  /// The launch number of every new trial's first launch (its credential is made ahead).
  static constexpr std::uint64_t kFirstLaunch = 1;
  /// Trials made per batch.
  static constexpr std::uint64_t kBatch = 256;
  /// Threads that make a batch's trials at once.
  static constexpr unsigned kThreads = 8;

  /// For the trials of `folders` (trial-N, and its checkpoint folder), up to `trial_cap`,
  /// on `off_loop`'s thread; `credentials`: nullopt when every trial starts on a worker
  /// step, which derives its attempts' credentials (no file per launch);
  /// `window`: how many trials to keep made or under way ahead of the next new one (at
  /// least a batch; the coordinator's: as many as run at once, so that the first wave's
  /// launches find theirs made too).
  LaunchFiles(TrialFolders folders, std::optional<CredentialFiles> credentials,
              BackgroundWork& off_loop, std::uint64_t trial_cap, std::uint64_t window = kBatch);
  LaunchFiles(const LaunchFiles&) = delete;
  LaunchFiles& operator=(const LaunchFiles&) = delete;

  /// `trial`'s files, when a batch made them (and takes them); nullopt: make them now.
  std::optional<LaunchFilesReady> take(core::TrialId trial);
  /// A launch number of its own, for every launch but a new trial's first.
  std::uint64_t next_launch() { return ++launches_; }
  /// `trial`'s files for attempt `attempt` made here and now (on the caller's thread),
  /// under a launch number of its own: for a launch that found none made. Throws what the
  /// file system said.
  LaunchFilesReady make_now(core::TrialId trial, std::uint64_t attempt) {
    return make_launch_files(folders_, credentials_ ? &*credentials_ : nullptr, trial, attempt,
                             next_launch());
  }
  /// A relaunch's files (a resumed, retried or restarted trial), made on the helper thread
  /// under a launch number of its own: its credential, its folder and its stderr.log's
  /// size. On ext4 a create among the thousands of credentials ended attempts left
  /// removed took a fifth of the loop at a rung crossing, and on a parallel file system
  /// each is a metadata round trip. `ready` runs on the loop once they are made (or
  /// could not be: take_relaunch says).
  void make_relaunch(core::TrialId trial, std::uint64_t attempt, std::function<void()> ready);
  /// What make_relaunch made for attempt `attempt` of `trial` (and takes it); nullopt:
  /// make them now.
  std::optional<LaunchFilesReady> take_relaunch(core::TrialId trial, std::uint64_t attempt);
  /// Keeps batches under way ahead of `next_trial`, the next new trial's id.
  void keep_ahead(core::TrialId next_trial);
  /// The session's end: waits for the batches under way, then removes what was made and
  /// not taken: the credentials, and the folders (where still empty) of the trials from
  /// `next_trial` on, which never started.
  void finish(core::TrialId next_trial);
  /// Launches that found their files made / that made them on the loop, for the log.
  std::uint64_t made_ahead() const { return made_ahead_; }
  std::uint64_t made_on_loop() const { return made_on_loop_; }
  void count_made_on_loop() { ++made_on_loop_; }
  std::uint64_t relaunches_made_off_loop() const { return relaunches_taken_; }
  /// Whether launches get a credential file from the coordinator (false: the workers
  /// derive their attempts').
  bool writes_credentials() const { return credentials_.has_value(); }

 private:
  TrialFolders folders_;
  // A copy: the tasks copy it again, the loop's stays put. nullopt: workers derive them.
  std::optional<CredentialFiles> credentials_;
  BackgroundWork& off_loop_;
  std::uint64_t trial_cap_;
  std::uint64_t window_;
  core::TrialId posted_to_ = 0;  // trials below have had a batch posted
  std::map<core::TrialId, LaunchFilesReady> ready_;
  std::map<core::TrialId, LaunchFilesReady> relaunches_ready_;
  std::uint64_t launches_ = kFirstLaunch;  // the last launch number handed out
  std::uint64_t made_ahead_ = 0, made_on_loop_ = 0, relaunches_taken_ = 0;
};

}  // namespace slurmtune::runtime
