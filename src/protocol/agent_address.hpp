#pragma once
// Where a node's agent says how to reach it (doc/protocol.md#node-agents): the ranks of a
// trial the coordinator starts as its own step (a trial of several ranks on worker
// launch) share one environment across nodes, so each finds its own node's agent by the
// node's name in a folder of the study's trials folder (SLURMTUNE_AGENTS), not by
// SLURMTUNE_ADDR.
#include <optional>
#include <string>
#include <string_view>

namespace slurmtune::protocol {

/// `prefix` and `node` in hex digits: a file name for any node name (node names need not
/// make good file names).
std::string node_file_name(std::string_view prefix, std::string_view node);

/// The file in `folder` in which the agent of `node` publishes its address.
std::string agent_address_file(const std::string& folder, std::string_view node);

/// The address the agent of `node` published in `folder`: "unix:PATH", or nullopt when
/// there is none (no file, or a line that is not a local socket's address).
std::optional<std::string> published_agent_address(const std::string& folder,
                                                   std::string_view node);

}  // namespace slurmtune::protocol
