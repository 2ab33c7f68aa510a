// The fleet harness's figures (fleet.cpp): what each part measures while it plays its
// nodes, and the one JSON line it writes at the end (bench_fleet.py reads it).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace slurmtune::fleet {

using Clock = std::chrono::steady_clock;

struct Figures {
  std::vector<float> round_trips_ms;
  std::uint64_t reports = 0, decisions = 0, trials = 0, refused = 0, killed = 0;
  double waited_s = 0, lived_s = 0;  // trials' time waiting on decisions, and in all
  // The steady state: reports sent from 10 s after the last trial started to 2 s before
  // the first one ended (the launch ramp and the final burst of ends left out).
  std::vector<Clock::time_point> sent_at;
  Clock::time_point last_welcome{}, first_end = Clock::time_point::max();
  // Which decisions asked for a checkpoint: those wait for a group commit of the
  // results file (the write-ahead), the others for the loop alone.
  std::vector<bool> asked_checkpoint;
  std::vector<float> timers_late_ms;  // the harness's own lag
  // From a REPORT's leaving its node (the emulated worker's send to the coordinator) to
  // its DECISION's being read there: the round trip without the fleet's turns before the
  // send, but with its wait to read the decision.
  std::vector<float> outside_ms;
  // That split at the decision's arrival in the node's socket (the kernel's receive
  // timestamp of the read that carried it, SO_TIMESTAMPNS): before it, the coordinator and
  // the kernel (`to_socket_ms`), what a cluster would measure too; after it, the wait for
  // the fleet's process to read it (`in_socket_ms`), this harness's own: 2,048 agents and
  // 16,384 trials share its core. The stamp is the read's newest packet's, so the first
  // part is, if anything, overstated.
  std::vector<float> to_socket_ms, in_socket_ms;
  std::vector<Clock::time_point> socket_sent_at;  // when each of those reports left
};

/// One JSON line of this part's figures to `path`: round trips overall, in the steady
/// state, by the kind of decision and by 10 s window, the part outside the fleet, and the
/// fleet's own lag (fleet.cpp's header names each).
void write_figures(Figures& figures, std::size_t nodes, const std::string& path);

}  // namespace slurmtune::fleet
