#pragma once
// The credentials a session hands out (protocol/credentials.hpp), one file of mode 0600
// each in STUDY.trials/credentials/ (mode 0700): a holder's SLURMTUNE_TOKEN_FILE. The
// folder is on the study's file system, which worker steps and joined jobs read as the
// coordinator does. Every session derives from a fresh secret, so what an earlier
// session left there is removed first and covers nothing anyway.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/schedulers/scheduler.hpp"
#include "runtime/control/background_work.hpp"

namespace slurmtune::runtime {

class CredentialFiles {
 public:
  /// Empties (or creates) `dir` for a session whose secret is `secret`.
  CredentialFiles(std::string dir, std::string secret);

  /// Writes the credential of `launch` of `attempt` of `trial` for its ranks, in a file of
  /// its own (a process of an earlier launch that reads its file again finds it gone);
  /// returns its path.
  std::string write_attempt(core::TrialId trial, std::uint64_t attempt, std::uint64_t launch) const;
  /// The same for a launch whose file this session has not written (the folder starts
  /// empty): one create, no removal first (LaunchFiles' batches, off the loop).
  std::string write_fresh_attempt(core::TrialId trial, std::uint64_t attempt,
                                  std::uint64_t launch) const;
  /// Removes it once the launch has ended (nothing it could still say is accepted), on
  /// `off_loop`'s thread: with trials writing checkpoints of GB, an unlink there waited
  /// up to 1.7 s for the file system's journal (ext4), and the loop with it.
  void remove_attempt(core::TrialId trial, std::uint64_t launch, BackgroundWork& off_loop) const;
  /// Writes the credential of a trial group's MPI step `step`; returns its path.
  std::string write_group_step(int step) const;
  /// Writes the credential of the worker on `node`, at worker_credential_file(dir, node):
  /// the one step of all workers gives each the same environment, and each finds its
  /// own by its node's name. Returns the folder.
  std::string write_worker(std::string_view node) const;

 private:
  std::string write(const std::string& name, const std::string& credential) const;
  std::string attempt_path(core::TrialId trial, std::uint64_t launch) const;

  std::string dir_, secret_;
};

/// Where the credential of the worker on `node` lies in `dir`: "worker-" and the name in
/// hex digits (node names need not make good file names).
std::string worker_credential_file(const std::string& dir, std::string_view node);

}  // namespace slurmtune::runtime
