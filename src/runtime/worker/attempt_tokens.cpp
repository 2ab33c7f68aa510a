#include "runtime/worker/attempt_tokens.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/error.hpp"
#include "protocol/wire/secret.hpp"

namespace slurmtune::runtime {

AttemptTokens::AttemptTokens(const std::string& base) {
  std::string pattern = base + "/slurmtune-tokens-XXXXXX";
  if (!::mkdtemp(pattern.data()))  // 0700: the study's user alone
    throw Error("worker: cannot create a folder for its trials' credentials in " + base + ": " +
                std::strerror(errno));
  folder_ = std::move(pattern);
}

AttemptTokens::~AttemptTokens() {
  std::error_code ignored;  // what cannot be removed is left to the node's cleanup
  std::filesystem::remove_all(folder_, ignored);
}

std::string AttemptTokens::path_of(const protocol::ProcessKey& key) const {
  return folder_ + "/trial-" + key.text();
}

std::string AttemptTokens::write(const protocol::ProcessKey& key,
                                 const std::string& credential) const {
  std::string path = path_of(key);
  ::unlink(path.c_str());  // a launch of the same attempt again writes it anew
  protocol::write_token_file(path, credential);
  return path;
}

void AttemptTokens::remove(const protocol::ProcessKey& key) const {
  ::unlink(path_of(key).c_str());  // gone already: nothing to do
}

}  // namespace slurmtune::runtime
