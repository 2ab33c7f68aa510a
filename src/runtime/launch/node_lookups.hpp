#pragma once
// Whether each node name of the allocation resolves, looked up on a thread of its own
// from the coordinator's start. A trial's MASTER_ADDR is its first node's name when the
// name resolves (rendezvous.hpp); asked on the loop at each node's first launch, the
// lookups of 2,048 nodes took 1.5 s of the loop's launch ramp on this project's test
// machine (/etc/hosts alone; a cluster's DNS or LDAP is slower), and the first reports'
// decisions waited behind them. The loop never waits for the thread: a node not looked up
// yet is looked up there, as before.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace slurmtune::runtime {

/// Whether `name` resolves (getaddrinfo).
bool name_resolves(const std::string& name);

class NodeLookups {
 public:
  /// Starts looking `nodes` up, in order.
  explicit NodeLookups(std::vector<std::string> nodes);
  /// Stops after the lookup under way (each is bounded by the resolver's own timeouts).
  ~NodeLookups();
  NodeLookups(const NodeLookups&) = delete;
  NodeLookups& operator=(const NodeLookups&) = delete;

  /// Whether `node` resolves, once the thread has looked it up; nullopt before, and for
  /// a node not in the list.
  std::optional<bool> resolves(const std::string& node) const;

 private:
  std::vector<std::string> nodes_;
  std::unordered_map<std::string, std::size_t> index_;  // fixed before the thread starts
  // Per node: 0 not looked up yet, 1 resolves, 2 does not; written by the thread alone.
  std::vector<std::atomic<std::uint8_t>> found_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace slurmtune::runtime
