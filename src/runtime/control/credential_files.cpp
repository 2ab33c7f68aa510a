#include "runtime/control/credential_files.hpp"

#include <filesystem>
#include <system_error>

#include "core/error.hpp"
#include "protocol/agent_address.hpp"
#include "protocol/credentials.hpp"
#include "protocol/wire/secret.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;

CredentialFiles::CredentialFiles(std::string dir, std::string secret)
    : dir_(std::move(dir)), secret_(std::move(secret)) {
  std::error_code error;
  fs::remove_all(dir_, error);
  if (error)
    throw Error(dir_ + ": cannot remove an earlier session's credentials: " + error.message());
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all);
}

std::string CredentialFiles::write(const std::string& name, const std::string& credential) const {
  std::string path = dir_ + "/" + name;
  std::error_code ignored;  // a relaunch of the same holder writes the same text again
  fs::remove(path, ignored);
  protocol::write_token_file(path, credential);
  return path;
}

std::string CredentialFiles::attempt_path(core::TrialId trial, std::uint64_t launch) const {
  return dir_ + "/trial-" + std::to_string(trial) + ".launch-" + std::to_string(launch);
}

std::string CredentialFiles::write_attempt(core::TrialId trial, std::uint64_t attempt,
                                           std::uint64_t launch) const {
  std::error_code ignored;  // a relaunch of the same holder writes the same text again
  fs::remove(attempt_path(trial, launch), ignored);
  return write_fresh_attempt(trial, attempt, launch);
}

std::string CredentialFiles::write_fresh_attempt(core::TrialId trial, std::uint64_t attempt,
                                                 std::uint64_t launch) const {
  std::string path = attempt_path(trial, launch);
  protocol::write_token_file(path, protocol::attempt_credential(secret_, trial, attempt, launch));
  return path;
}

void CredentialFiles::remove_attempt(core::TrialId trial, std::uint64_t launch,
                                     BackgroundWork& off_loop) const {
  off_loop.post([path = attempt_path(trial, launch)]() -> BackgroundWork::Finish {
    std::error_code ignored;  // already gone: nothing to remove
    fs::remove(path, ignored);
    return {};
  });
}

std::string CredentialFiles::write_group_step(int step) const {
  return write("step-" + std::to_string(step), protocol::group_step_credential(secret_, step));
}

std::string CredentialFiles::write_worker(std::string_view node) const {
  const std::string path = worker_credential_file(dir_, node);
  write(fs::path(path).filename().string(), protocol::worker_credential(secret_, node));
  return dir_;
}

std::string worker_credential_file(const std::string& dir, std::string_view node) {
  return dir + "/" + protocol::node_file_name("worker-", node);
}

}  // namespace slurmtune::runtime
