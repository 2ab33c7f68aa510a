#pragma once
// The rendezvous variables of each trial (doc/protocol.md#rendezvous): MASTER_ADDR and
// MASTER_PORT for its rank 0, WORLD_SIZE and LOCAL_WORLD_SIZE for all, RANK, LOCAL_RANK
// and NODE_RANK per rank (set by `slurmtune rank-exec` in front of a multi-rank command).
// Ports are unique among the study's running trials on each node; on the coordinator's
// own host a port is also checked free by binding it, and claimed host-wide while its
// trial runs, so that concurrent studies on one host never hand out the same port.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/placement/rendezvous.hpp"
#include "core/study/study_spec.hpp"
#include "protocol/wire/unique_fd.hpp"
#include "runtime/launch/launcher.hpp"
#include "runtime/launch/node_lookups.hpp"

namespace slurmtune::runtime {

struct TrialRendezvous {
  std::string
      host;      ///< MASTER_ADDR: the trial's first node (its address if the name does not resolve)
  int port = 0;  ///< MASTER_PORT
  std::map<std::string, std::string> env;
};

class RendezvousAssigner {
 public:
  /// `ports`: (first, count); `local`: the local launcher (every trial on this host,
  /// MASTER_ADDR 127.0.0.1); `scratch`: a file for `scontrol`'s answer; `nodes`: the
  /// allocation's, looked up from now on a thread of their own (NodeLookups).
  RendezvousAssigner(std::pair<int, int> ports, bool local, std::string scratch,
                     std::vector<std::string> nodes = {});

  /// The variables of a trial of shape `resources` on `placement`; nullopt when every
  /// port of the range is taken on its first node.
  std::optional<TrialRendezvous> assign(const TrialResources& placement,
                                        const core::ResourceSpec& resources);
  void release(const TrialRendezvous& rendezvous);
  /// `argv` for a multi-rank trial: `slurmtune rank-exec -- argv` (this executable).
  static std::vector<std::string> with_rank_exec(const std::vector<std::string>& argv);
  /// "ports 29500-30499" for the log.
  std::string describe() const;

 private:
  /// A node's name when it resolves, else its NodeAddr as `scontrol show node` gives it
  /// (asked once; a test cluster's nodes are names of one host), else the name.
  std::string address_of(const std::string& node);

  core::RendezvousPorts ports_;  // keyed by address: nodes sharing one host share ports
  bool local_;
  std::string scratch_;
  std::map<std::string, std::string> addresses_;
  std::unique_ptr<NodeLookups> lookups_;
  bool asked_slurm_ = false;
  /// This host's ports handed out, each claimed host-wide so that other coordinators on
  /// it (other studies, other users) do not hand them out too.
  std::map<int, protocol::UniqueFd> claims_;
};

/// The kernel's ephemeral ports from `path` (two numbers); Linux's default when it
/// cannot be read.
core::EphemeralPorts ephemeral_ports(
    const std::string& path = "/proc/sys/net/ipv4/ip_local_port_range");

/// The default range: 250 ports outside the ephemeral ones, from a base chosen by the
/// Slurm job id (or this process's id outside Slurm); core::rendezvous_base.
std::pair<int, int> default_rendezvous_ports();

}  // namespace slurmtune::runtime
