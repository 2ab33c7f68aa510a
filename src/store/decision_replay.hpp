#pragma once
// The study's decision state rebuilt from its recorded rows (issue #63): every start,
// report and end, in sequence order, into the scheduler and the sampler, with what a
// resume needs besides (each trial's last step, PBT's exploits, the checkpoints asked
// for). A resume replays the results file through it; `slurmtune run` feeds one the rows
// it records (store/decision_snapshots.hpp) and writes its state into the file at
// intervals, so that a resume starts from that snapshot and replays only the rows after.
//
// A snapshot's bytes: a header (magic, state format, the first seq it does not hold, the
// reports it replayed), the body (cereal's portable archive of the bookkeeping and of
// the scheduler's and the sampler's state, core/state_archive.hpp) and a SHA-256 of both,
// so a snapshot torn by a writer killed while writing it is never read.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/search/suggester.hpp"
#include "core/study/study_spec.hpp"
#include "store/study_reader.hpp"

namespace slurmtune::store {

/// A snapshot's header, as read back.
struct SnapshotHeader {
  std::uint32_t format = 0;  ///< core::kStateFormat of the build that wrote it
  std::uint64_t seq = 0;     ///< the first sequence number it does not hold
  std::uint64_t reports = 0;
};

/// The header of `bytes` (a whole snapshot) once its digest holds; nullopt with the
/// reason in `why` when it does not (torn, not a snapshot).
std::optional<SnapshotHeader> check_snapshot(std::string_view bytes, std::string& why);
/// Whether a study can keep decision snapshots: not with suggest_ahead, whose suggestion
/// at the last start a snapshot taken after it cannot stand in for (resume.cpp).
bool decision_snapshots_possible(const core::StudySpec& spec);
/// A snapshot's first bytes, which give its length.
inline constexpr std::size_t kSnapshotHeaderBytes = 36;
/// The length a snapshot's first kSnapshotHeaderBytes give (nullopt: not a snapshot).
std::optional<std::size_t> snapshot_length(std::string_view header);

class DecisionReplay {
 public:
  /// The scheduler as `recorded` made it, the sampler as `now` makes it (a resume's
  /// rules: with_recorded_defaults). `path` names the results file in errors.
  DecisionReplay(const core::StudySpec& recorded, const core::StudySpec& now, std::string path);

  /// The sessions the rows come from (/sessions' first seqs): a sampler learns that a
  /// new session began at its first row.
  void add_session(std::uint64_t first_seq);
  /// Resume only: the last start the file records, and the position its suggestion left
  /// the streams at; suggest_ahead makes the next suggestion when it is replayed.
  void set_last_start(core::TrialId trial, const core::SamplerPosition& position);

  /// One row, in sequence order. A start needs the trial's configuration as /trials
  /// records it.
  void event(const EventRecord& e, const core::Configuration* config);
  void metric(const MetricRecord& m);

  /// The state after the rows so far, as snapshot bytes.
  std::string snapshot() const;
  /// Puts the replay where `bytes` (check_snapshot's) left it; throws InputError when
  /// they do not belong to this study's scheduler and sampler.
  void load(std::string_view bytes);

  /// The first sequence number after the rows replayed (0: none).
  std::uint64_t next_seq() const { return last_seq_ ? *last_seq_ + 1 : 0; }
  std::uint64_t reports() const { return reports_; }
  std::optional<core::TrialId> last_started() const { return last_started_; }
  std::map<core::TrialId, double> last_steps() const;
  const std::map<core::TrialId, double>& awaited_checkpoints() const { return awaited_; }
  const std::vector<std::pair<core::TrialId, core::Exploit>>& exploits() const { return exploits_; }
  core::Scheduler& scheduler() { return *scheduler_; }
  core::Suggester& suggester() { return *suggester_; }
  std::unique_ptr<core::Scheduler> take_scheduler() { return std::move(scheduler_); }
  std::unique_ptr<core::Suggester> take_suggester() { return std::move(suggester_); }

 private:
  void row_seq(std::uint64_t seq);
  void set_last_step(core::TrialId trial, double step);
  void take_exploits();

  std::string path_;
  std::unique_ptr<core::Scheduler> scheduler_;
  std::unique_ptr<core::Suggester> suggester_;
  std::vector<std::uint64_t> session_starts_;  // ascending
  std::size_t next_session_ = 0;
  std::optional<std::pair<core::TrialId, core::SamplerPosition>> last_of_file_;
  // What a snapshot holds besides the scheduler and the sampler:
  std::vector<double> last_steps_;  // by trial id; NaN: none
  std::map<core::TrialId, double> awaited_;
  std::vector<std::pair<core::TrialId, core::Exploit>> exploits_;
  std::uint64_t reports_ = 0;
  std::optional<std::uint64_t> last_seq_;
  std::optional<core::TrialId> last_started_;
};

}  // namespace slurmtune::store
