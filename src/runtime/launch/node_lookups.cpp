#include "runtime/launch/node_lookups.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <memory>

#include "store/file/flush_thread.hpp"

namespace slurmtune::runtime {

bool name_resolves(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int failed = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, ::freeaddrinfo);
  return failed == 0 && found;
}

NodeLookups::NodeLookups(std::vector<std::string> nodes)
    : nodes_(std::move(nodes)), found_(nodes_.size()) {
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    index_.emplace(nodes_[i], i);
  thread_ = store::background_thread("st-lookups", [this] {
    for (std::size_t i = 0; i < nodes_.size() && !stop_.load(std::memory_order_relaxed); ++i)
      found_[i].store(name_resolves(nodes_[i]) ? 1 : 2, std::memory_order_release);
  });
}

NodeLookups::~NodeLookups() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::optional<bool> NodeLookups::resolves(const std::string& node) const {
  const auto it = index_.find(node);
  if (it == index_.end()) return std::nullopt;
  const std::uint8_t found = found_[it->second].load(std::memory_order_acquire);
  if (found == 0) return std::nullopt;
  return found == 1;
}

}  // namespace slurmtune::runtime
