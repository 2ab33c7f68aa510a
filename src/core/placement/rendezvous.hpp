#pragma once
// Rendezvous of multi-rank trials (torch.distributed's env://, torchrun-style scripts,
// Horovod): the coordinator gives every trial a MASTER_ADDR (its first node) and a
// MASTER_PORT unique among the study's trials running on that node; each rank learns its
// RANK, LOCAL_RANK and NODE_RANK from what Slurm or Open MPI set for it.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace slurmtune::core {

/// Ports handed to trials, per host: [first, first + count), lowest free first.
class RendezvousPorts {
 public:
  /// `usable`: whether a port is free on that host as far as the caller can tell (the
  /// coordinator tries to bind ports of its own host); empty: all are.
  using Probe = std::function<bool(const std::string& host, int port)>;
  RendezvousPorts(int first, int count, Probe usable = {});

  /// A port for a trial whose rank 0 runs on `host`, or nullopt when every port of the
  /// range is taken there.
  std::optional<int> acquire(const std::string& host);
  void release(const std::string& host, int port);
  int first() const { return first_; }
  int count() const { return count_; }

 private:
  int first_, count_;
  Probe usable_;
  std::map<std::string, std::set<int>> taken_;
};

/// Ports [first, last] the kernel hands out itself: to outgoing connections and to
/// sockets bound to port 0 (Linux: /proc/sys/net/ipv4/ip_local_port_range).
struct EphemeralPorts {
  int first = 32768, last = 60999;  // Linux's default
};

/// The first port of a study's default range of `count` ports: one of the windows of
/// `count` ports from 29500 to 65535 that lie outside the ephemeral ports, chosen by
/// `salt` (the Slurm job id, or the process id) so studies sharing a node rarely meet.
/// Outside, because a MASTER_PORT the kernel may give any connection of the host in
/// the seconds before the trial binds it can be taken (a flake seen as "Address already
/// in use"). When no window lies outside, every window from 29500 is used.
int rendezvous_base(std::uint64_t salt, int count, const EphemeralPorts& ephemeral = {});

/// Parses "FIRST-LAST" (`--rendezvous-ports`); throws InputError naming the text.
std::pair<int, int> parse_port_range(const std::string& text);

/// RANK, LOCAL_RANK and NODE_RANK of this process, from Slurm (SLURM_PROCID,
/// SLURM_LOCALID, SLURM_NODEID) or Open MPI (OMPI_COMM_WORLD_RANK,
/// OMPI_COMM_WORLD_LOCAL_RANK; its node index is RANK / LOCAL_WORLD_SIZE, as mpirun
/// fills one node before the next); empty when neither launched it. Throws InputError
/// naming a variable that is not a number.
std::map<std::string, std::string> rank_environment(const std::map<std::string, std::string>& env);

}  // namespace slurmtune::core
