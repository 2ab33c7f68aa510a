#pragma once
// The credential files of the attempts a worker step starts (doc/protocol.md#credentials).
// The worker derives each from its own credential and the LAUNCH's launch number, and
// writes it on its node's own disk, in a folder of its own (0700), each file 0600: a
// launch makes no file on the study's file system, whose metadata server 16,384 trials
// resuming at a rung would otherwise queue on. The files go when their attempts end,
// and the folder with the worker.
#include <string>

#include "protocol/worker_messages.hpp"

namespace slurmtune::runtime {

class AttemptTokens {
 public:
  /// A fresh folder (0700) in `base`; Error naming it when it cannot be made.
  explicit AttemptTokens(const std::string& base);
  ~AttemptTokens();
  AttemptTokens(const AttemptTokens&) = delete;
  AttemptTokens& operator=(const AttemptTokens&) = delete;

  /// Writes `credential` for attempt `key` (0600) and returns its path, the attempt's
  /// SLURMTUNE_TOKEN_FILE. Error naming the file when it cannot be written.
  std::string write(const protocol::ProcessKey& key, const std::string& credential) const;
  /// The attempt has ended: its file goes.
  void remove(const protocol::ProcessKey& key) const;
  const std::string& folder() const { return folder_; }

 private:
  std::string path_of(const protocol::ProcessKey& key) const;

  std::string folder_;
};

}  // namespace slurmtune::runtime
