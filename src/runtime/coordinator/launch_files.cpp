#include "runtime/coordinator/launch_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/study_paths.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

namespace {

// A new trial's folder and its first launch's credential: one mkdir and one create on a
// fresh folder (two metadata operations), a stat of its stderr.log more on one that a
// session before made. nullopt: what the batch cannot make is left to the launch, which
// says why it failed.
std::optional<LaunchFilesReady> make_first_launch(const TrialFolders& folders,
                                                  const CredentialFiles* credentials,
                                                  core::TrialId trial) {
  const std::string dir = folders.trial(trial);
  // Its folder in [checkpoints] folder, the user's only (a scratch file system is shared).
  if (const std::string elsewhere = folders.checkpoints(trial);
      elsewhere != dir && ::mkdir(elsewhere.c_str(), 0700) != 0 && errno != EEXIST)
    return std::nullopt;
  std::uintmax_t stderr_size = 0;
  if (::mkdir(dir.c_str(), 0777) != 0) {
    std::error_code error;
    if (errno != EEXIST || !fs::is_directory(dir, error)) return std::nullopt;
    const auto size = fs::file_size(dir + "/stderr.log", error);
    stderr_size = error ? 0 : size;
  }
  if (!credentials) return LaunchFilesReady{{}, stderr_size};
  try {
    return LaunchFilesReady{credentials->write_fresh_attempt(trial, 0, LaunchFiles::kFirstLaunch),
                            stderr_size};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Off the loop: nullopt when they cannot be made, and the launch makes them on the loop
// (make_launch_files), which says what failed.
std::optional<LaunchFilesReady> make_relaunch_files(const TrialFolders& folders,
                                                    const CredentialFiles* credentials,
                                                    core::TrialId trial, std::uint64_t attempt,
                                                    std::uint64_t launch) {
  try {
    return make_launch_files(folders, credentials, trial, attempt, launch);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Metadata operations wait on the file system's servers, not on a core: a batch's trials
// are made by several threads at once (a parallel file system serves them in parallel).
template <typename Make>
void make_in_parallel(core::TrialId from, core::TrialId to, const Make& make) {
  std::atomic<core::TrialId> next{from};
  const auto work = [&] {
    for (core::TrialId trial = next++; trial < to; trial = next++)
      make(trial);
  };
  std::vector<std::jthread> helpers;
  for (unsigned i = 1; i < LaunchFiles::kThreads; ++i) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {  // no more threads (a process limit): fewer do it
      break;
    }
  }
  work();
}

}  // namespace

LaunchFilesReady make_launch_files(const TrialFolders& folders, const CredentialFiles* credentials,
                                   core::TrialId trial, std::uint64_t attempt,
                                   std::uint64_t launch) {
  const std::string dir = folders.trial(trial);
  fs::create_directories(dir);
  if (const std::string elsewhere = folders.checkpoints(trial);
      elsewhere != dir && fs::create_directories(elsewhere))
    fs::permissions(elsewhere, fs::perms::owner_all);
  std::error_code missing;
  const auto size = fs::file_size(dir + "/stderr.log", missing);
  return LaunchFilesReady{credentials ? credentials->write_attempt(trial, attempt, launch) : "",
                          missing ? 0 : size, launch, attempt};
}

LaunchFiles::LaunchFiles(TrialFolders folders, std::optional<CredentialFiles> credentials,
                         BackgroundWork& off_loop, std::uint64_t trial_cap, std::uint64_t window)
    : folders_(std::move(folders)),
      credentials_(std::move(credentials)),
      off_loop_(off_loop),
      trial_cap_(trial_cap),
      window_(std::max(window, kBatch)) {}

std::optional<LaunchFilesReady> LaunchFiles::take(core::TrialId trial) {
  const auto it = ready_.find(trial);
  if (it == ready_.end()) return std::nullopt;
  LaunchFilesReady files = std::move(it->second);
  ready_.erase(it);
  ++made_ahead_;
  return files;
}

void LaunchFiles::make_relaunch(core::TrialId trial, std::uint64_t attempt,
                                std::function<void()> ready) {
  off_loop_.post([this, folders = folders_, credentials = credentials_, trial, attempt,
                  launch = next_launch(),
                  ready = std::move(ready)]() mutable -> BackgroundWork::Finish {
    auto made =
        make_relaunch_files(folders, credentials ? &*credentials : nullptr, trial, attempt, launch);
    return [this, trial, made = std::move(made), ready = std::move(ready)]() mutable {
      if (made) relaunches_ready_.insert_or_assign(trial, std::move(*made));
      ready();
    };
  });
}

std::optional<LaunchFilesReady> LaunchFiles::take_relaunch(core::TrialId trial,
                                                           std::uint64_t attempt) {
  const auto it = relaunches_ready_.find(trial);
  if (it == relaunches_ready_.end()) return std::nullopt;
  LaunchFilesReady files = std::move(it->second);
  relaunches_ready_.erase(it);
  if (files.attempt == attempt) {
    ++relaunches_taken_;
    return files;
  }
  if (credentials_)  // made for another attempt
    credentials_->remove_attempt(trial, files.launch, off_loop_);
  return std::nullopt;
}

void LaunchFiles::keep_ahead(core::TrialId next_trial) {
  posted_to_ = std::max(posted_to_, next_trial);
  while (posted_to_ < trial_cap_ && posted_to_ < next_trial + window_) {
    const core::TrialId from = posted_to_;
    const core::TrialId to = std::min<core::TrialId>(from + kBatch, trial_cap_);
    posted_to_ = to;
    // The task touches only its copies; its finish, on the loop, hands over what it made.
    off_loop_.post([this, folders = folders_, credentials = credentials_, from,
                    to]() -> BackgroundWork::Finish {
      std::vector<std::optional<LaunchFilesReady>> made(to - from);
      make_in_parallel(from, to, [&](core::TrialId trial) {
        made[trial - from] =
            make_first_launch(folders, credentials ? &*credentials : nullptr, trial);
      });
      return [this, from, made = std::move(made)]() mutable {
        for (std::size_t i = 0; i < made.size(); ++i)
          if (made[i]) ready_.emplace(from + i, std::move(*made[i]));
      };
    });
  }
}

void LaunchFiles::finish(core::TrialId next_trial) {
  off_loop_.drain();
  for (const auto& [trial, files] : ready_) {
    std::error_code ignored;             // what cannot be removed is left; the next session's start
    if (!files.credential_file.empty())  // empties the credentials anyway
      fs::remove(files.credential_file, ignored);
    // A trial that started (its launch made its own files) keeps its folder.
    if (trial >= next_trial) {  // removed if empty
      fs::remove(folders_.trial(trial), ignored);
      fs::remove(folders_.checkpoints(trial), ignored);
    }
  }
  ready_.clear();
  for (const auto& [trial, files] : relaunches_ready_) {
    std::error_code ignored;
    if (!files.credential_file.empty()) fs::remove(files.credential_file, ignored);
  }
  relaunches_ready_.clear();
}

}  // namespace slurmtune::runtime
