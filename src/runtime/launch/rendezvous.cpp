#include "runtime/launch/rendezvous.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/placement/hostlist.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/this_process.hpp"

namespace slurmtune::runtime {
namespace {

// Ports per study by default: MASTER_PORTs are unique per host, and 250 trials at once
// on one host is far more than its cores run; smaller windows give more of them
// outside the ephemeral ports (29500-32767 and 61000-65535 on a default Linux).
constexpr int kDefaultPorts = 250;
constexpr double kScontrolWait_s = 10;

// Whether nothing listens on `port` of this host now (a trial of another study, a
// service): binding it on all interfaces succeeds.
bool free_here(int port) {
  const protocol::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return true;  // cannot tell: assume free
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  return ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
}

// A claim on `port` of this host that every slurmtune coordinator on it sees, whoever
// runs it: an abstract UNIX socket named after the port (Linux; no file to clean up, gone
// when its holder exits). The bind test above cannot see a port that another study has
// just handed to a trial whose rank 0 has not bound it yet (importing torch takes
// seconds); two studies whose ranges overlap then gave two trials one MASTER_PORT.
protocol::UniqueFd claim_port(int port) {
  protocol::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fd;
  const std::string name = "slurmtune-rendezvous-port-" + std::to_string(port);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) return {};
  return fd;
}

// NodeName -> NodeAddr from `scontrol show node -o` (one node per line).
std::map<std::string, std::string> slurm_node_addresses(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string name, address;
    for (std::string word; words >> word;) {
      if (word.starts_with("NodeName=")) name = word.substr(9);
      if (word.starts_with("NodeAddr=")) address = word.substr(9);
    }
    if (!name.empty() && !address.empty()) out[name] = address;
  }
  return out;
}

}  // namespace

core::EphemeralPorts ephemeral_ports(const std::string& path) {
  core::EphemeralPorts ports;
  std::ifstream in(path);
  int first = 0, last = 0;
  if (in >> first >> last && first >= 1 && first <= last && last <= 65535) {
    ports.first = first;
    ports.last = last;
  }
  return ports;
}

std::pair<int, int> default_rendezvous_ports() {
  const char* job = std::getenv("SLURM_JOB_ID");
  const std::uint64_t salt =
      job && *job ? std::strtoull(job, nullptr, 10) : static_cast<std::uint64_t>(::getpid());
  return {core::rendezvous_base(salt, kDefaultPorts, ephemeral_ports()), kDefaultPorts};
}

RendezvousAssigner::RendezvousAssigner(std::pair<int, int> ports, bool local, std::string scratch,
                                       std::vector<std::string> nodes)
    : ports_(ports.first, ports.second,
             [this, local, self = host_name()](const std::string& address, int port) {
               const bool here = local || address == self || address.starts_with("127.");
               if (!here) return true;
               protocol::UniqueFd claim = claim_port(port);
               if (!claim || !free_here(port)) return false;
               claims_[port] = std::move(claim);  // held until the trial's port is released
               return true;
             }),
      local_(local),
      scratch_(std::move(scratch)),
      lookups_(local || nodes.empty() ? nullptr : std::make_unique<NodeLookups>(std::move(nodes))) {
}

std::string RendezvousAssigner::address_of(const std::string& node) {
  if (const auto known = addresses_.find(node); known != addresses_.end()) return known->second;
  const std::optional<bool> looked_up = lookups_ ? lookups_->resolves(node) : std::nullopt;
  if (looked_up ? *looked_up : name_resolves(node)) return addresses_[node] = node;
  if (!asked_slurm_) {
    asked_slurm_ = true;
    const CommandOutput out =
        capture_output({"scontrol", "show", "node", "-o"}, scratch_, kScontrolWait_s);
    if (out.text)
      for (const auto& [name, address] : slurm_node_addresses(*out.text))
        if (!addresses_.contains(name)) addresses_[name] = address;
  }
  if (const auto known = addresses_.find(node); known != addresses_.end()) return known->second;
  return addresses_[node] = node;
}

std::optional<TrialRendezvous> RendezvousAssigner::assign(const TrialResources& placement,
                                                          const core::ResourceSpec& resources) {
  const std::int64_t ranks = resources.ranks();
  // The local launcher runs every rank on this host.
  const std::int64_t ranks_per_node = local_ ? ranks : resources.ntasks_per_node;
  TrialRendezvous r;
  if (local_) {
    r.host = "127.0.0.1";
  } else {
    const auto hosts = core::expand_hostlist(placement.hostlist);
    r.host = address_of(hosts.empty() ? placement.hostlist : hosts.front());
  }
  const auto port = ports_.acquire(r.host);
  if (!port) return std::nullopt;
  r.port = *port;
  r.env = {{"MASTER_ADDR", r.host},
           {"MASTER_PORT", std::to_string(r.port)},
           {"WORLD_SIZE", std::to_string(ranks)},
           {"LOCAL_WORLD_SIZE", std::to_string(ranks_per_node)}};
  if (ranks == 1) r.env.insert({{"RANK", "0"}, {"LOCAL_RANK", "0"}, {"NODE_RANK", "0"}});
  return r;
}

void RendezvousAssigner::release(const TrialRendezvous& rendezvous) {
  ports_.release(rendezvous.host, rendezvous.port);
  claims_.erase(rendezvous.port);
}

std::vector<std::string> RendezvousAssigner::with_rank_exec(const std::vector<std::string>& argv) {
  std::vector<std::string> out = {self_program(), "rank-exec", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string RendezvousAssigner::describe() const {
  return "rendezvous ports " + std::to_string(ports_.first()) + "-" +
         std::to_string(ports_.first() + ports_.count() - 1);
}

}  // namespace slurmtune::runtime
