// The coordinator's side of the control-plane conversation (doc/protocol.md): HELLO
// binds a connection to a running trial, REPORT goes to the study controller and the
// results file, ASK returns the trial's current instruction, CHECKPOINT is indexed, BYE
// records how the trial ended.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "core/number_text.hpp"
#include "core/text.hpp"
#include "protocol/trial_messages.hpp"
#include "runtime/attempts/active_trial.hpp"
#include "runtime/coordinator/checkpoint_path.hpp"
#include "runtime/coordinator/coordinator.hpp"
#include "runtime/log.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::runtime {
namespace fs = std::filesystem;
namespace {

// Checkpoint before leaving when the trial may run again (a pause, a shutdown), at every
// rung it passes (a retry or a promotion then starts from there), and where PBT asks
// (others may clone it). An exploited trial resumes from its donor's checkpoint.
bool asks_for_checkpoint(core::Instruction instruction, const core::ReportOutcome* outcome) {
  const bool exploited = outcome && outcome->exploit;
  return !exploited &&
         (instruction == core::Instruction::Pause || instruction == core::Instruction::Suspend ||
          (instruction == core::Instruction::Continue && outcome &&
           (outcome->rung || outcome->checkpoint)));
}

std::string decision_payload(core::Instruction instruction, const core::ReportOutcome* outcome,
                             bool duplicate) {
  protocol::DecisionReply reply;
  reply.decision = core::decision_word(instruction);
  reply.instruction = core::to_string(instruction);
  reply.checkpoint = asks_for_checkpoint(instruction, outcome);
  if (outcome && outcome->exploit)
    reply.exploit =
        protocol::DecisionReply::Exploit{outcome->exploit->donor, outcome->exploit->donor_step};
  if (outcome && outcome->rung) reply.rung = *outcome->rung;
  if (outcome) reply.cutoff = outcome->cutoff;
  reply.duplicate = duplicate;
  return protocol::encode(reply);
}

}  // namespace

protocol::AttemptGrant Coordinator::attempt_grant(core::TrialId trial) const {
  const ActiveTrial* t = trials_.find(trial);
  return t ? protocol::AttemptGrant{t->launch, t->credential_host} : protocol::AttemptGrant{};
}

std::string Coordinator::on_hello(ConnectionId id, const protocol::HelloFrom& from) {
  const auto* hello = std::get_if<protocol::TrialHello>(&from);
  if (!hello) return backend_->on_hello(id, from);  // a group's, a worker's
  ActiveTrial* t = trials_.find(hello->trial);
  if (!t)
    throw protocol::ProtocolError(
        "trial " + std::to_string(hello->trial) +
        " is not running in this study (a process of an earlier attempt?)");
  // The credential covered the attempt the HELLO names; only the running one speaks.
  if (hello->attempt != t->attempt)
    throw protocol::ProtocolError("attempt " + std::to_string(hello->attempt) + " of trial " +
                                  std::to_string(hello->trial) + " has ended; attempt " +
                                  std::to_string(t->attempt) + " is running");
  // A rank the trial has, and one reporter: a second rank 0 would take the reports over
  // from the first, whose next REPORT was then refused.
  const std::int64_t ranks = spec_.resources.ranks();
  if (hello->rank >= ranks)
    throw protocol::ProtocolError("trial " + std::to_string(hello->trial) + " has " +
                                  std::to_string(ranks) + " rank(s); rank " +
                                  std::to_string(hello->rank) + " is not one of them");
  if (hello->rank == 0 && t->reporter && trials_.of_connection(*t->reporter) == t)
    throw protocol::ProtocolError("rank 0 of trial " + std::to_string(hello->trial) +
                                  " is connected already; only one connection reports");
  // Each rank connects once, and again if its connection is lost: a few per rank are
  // enough, and a trial's child opening hundreds cannot take the coordinator's descriptors.
  const std::size_t open = trials_.connection_count(hello->trial);
  const std::size_t cap = kConnectionsPerRank * static_cast<std::size_t>(ranks);
  if (open >= cap)
    throw protocol::ProtocolError("trial " + std::to_string(hello->trial) + " has " +
                                  std::to_string(cap) + " connections open already (at most " +
                                  std::to_string(kConnectionsPerRank) + " per rank)");
  // Nor may one wide trial take the connections the others need: past its share, the
  // ranks that only ask wait their turn (BUSY) while its reporter is always admitted.
  const std::size_t share = std::max<std::size_t>(8, server_->stats().max_authenticated / 8);
  if (hello->rank != 0 && open >= share)
    throw NoRoom("trial " + std::to_string(hello->trial) + " holds " + std::to_string(open) +
                     " connections, its share of the coordinator's",
                 kBusyRetryS);
  if (hello->rank == 0) t->reporter = id;
  if (!hello->slurm_step.empty()) t->slurm_step = hello->slurm_step;
  trials_.bind(id, hello->trial);
  protocol::TrialAssignment welcome = t->assignment();
  welcome.metric = spec_.metric;
  return protocol::encode(welcome);
}

std::optional<Reply> Coordinator::on_message(ConnectionId id, protocol::MessageType type,
                                             const protocol::JsonObject& body) {
  // A trial's REPORT, CHECKPOINT and HEARTBEAT are the coordinator's whichever connection
  // carries them: the trial's own, or a backend's peer that speaks for it (a group).
  const bool trial_traffic = type == protocol::MessageType::Report ||
                             type == protocol::MessageType::Checkpoint ||
                             type == protocol::MessageType::Heartbeat;
  if (backend_->owns(id)) {
    if (const auto trial = backend_->trial_of(id); trial && trial_traffic)
      if (ActiveTrial* t = trials_.find(*trial)) return trial_message(*t, id, type, body);
    return backend_->on_message(id, type, body);
  }
  ActiveTrial* t = trials_.of_connection(id);
  if (!t) throw protocol::ProtocolError("this trial has ended");
  switch (type) {
    case protocol::MessageType::Ask:
      return Reply{protocol::MessageType::Decision,
                   decision_payload(controller_->instruction(t->trial), nullptr, false)};
    case protocol::MessageType::Bye:
      if (const auto ending = protocol::decode_trial_ending(body, "BYE"); !ending.completed) {
        t->bye_failed = true;
        t->bye_error = ending.error;
      }
      return std::nullopt;
    default:
      return trial_message(*t, id, type, body);
  }
}

std::optional<Reply> Coordinator::on_report(ActiveTrial& t, ConnectionId id,
                                            const protocol::JsonObject& body) {
  const protocol::Report report = protocol::decode_report(body);
  const double step = report.step;
  // One value per declared metric, in the results file's column order (the scheduled
  // metric first); NaN where the report has none. Names are resolved once, here.
  std::vector<double> values(spec_.metrics.size(), NAN);
  for (const auto& [name, value] : report.metrics) {
    const auto column = std::find(spec_.metrics.begin(), spec_.metrics.end(), name);
    if (column == spec_.metrics.end())
      throw protocol::ProtocolError("REPORT: metric '" + core::visible(core::fit_utf8(name, 200)) +
                                    "' is not declared in the study file ([study] metrics)");
    values[static_cast<std::size_t>(column - spec_.metrics.begin())] = value.value_or(NAN);
  }
  const double judged = values.empty() ? NAN : values.front();
  // One time for the sampler (step costs) and the record it is rebuilt from.
  const double now = store::unix_time_s();
  controller_->stamp(now);
  const core::ReportVerdict verdict = [&] {
    const auto deciding = stalls_.measure(core::LoopWork::Decisions);
    return controller_->report(t.trial, step, values);
  }();
  if (!verdict.duplicate) {
    const auto recording = stalls_.measure(core::LoopWork::Results);
    study_.writer->report(t.trial, step, now, values, verdict.outcome);
    time_.reported(t.trial, step, verdict.outcome.milestone);
  }
  pbt_.carry_out();
  // Write-ahead: the report that makes a trial save a checkpoint (or load a donor's) is
  // in the file before the trial hears of it. A trial's checkpoint file is often
  // overwritten in place, so if the coordinator died between the two, a resumed study
  // would hand the trial its older indexed step while the file already holds this one,
  // and the trial would skip reports the study never recorded (a PBT population then
  // decides otherwise). The decision waits for the next group commit, which holds every
  // row buffered until now; the loop goes on meanwhile.
  const bool write_ahead =
      !verdict.duplicate && (asks_for_checkpoint(verdict.instruction, &verdict.outcome) ||
                             verdict.outcome.exploit.has_value());
  if (verdict.instruction != core::Instruction::Continue && !verdict.duplicate) {
    log_line(
        "trial " + std::to_string(t.trial) + " told to " +
        std::string(core::to_string(verdict.instruction)) + " at step " +
        core::format_double(step) + " (" + spec_.metric + " " + core::format_double(judged) +
        (verdict.outcome.cutoff ? ", cutoff " + core::format_double(*verdict.outcome.cutoff) : "") +
        ")");
    schedule_stop(trials_, t, time_.now(),
                  controller_->shutting_down() ? options_.shutdown_grace_s : options_.stop_grace_s);
  }
  Reply reply{protocol::MessageType::Decision,
              decision_payload(verdict.instruction, &verdict.outcome, verdict.duplicate)};
  // A trial whose checkpoint is still being copied hears nothing more until it is kept.
  if (pbt_.hold_while_keeping(t.trial, id, reply, write_ahead)) return std::nullopt;
  if (!write_ahead) return reply;
  hold_for_next_commit(durable_replies_, *study_.writer, id, std::move(reply));
  return std::nullopt;
}

void Coordinator::on_checkpoint(ActiveTrial& t, const protocol::JsonObject& body) {
  const protocol::CheckpointSaved saved = protocol::decode_checkpoint(body);
  const double step = saved.step;
  // On its node's own disk (node_local), or in a folder this process sees.
  const auto on_node = node_checkpoints_
                           ? node_local_record(saved.path, t.checkpoint_dir, t.placement.hostlist)
                           : std::nullopt;
  const CheckpointPath checkpoint = [&] {
    if (on_node) return CheckpointPath{fs::path(), *on_node};
    if (!node_checkpoints_)
      return confined_checkpoints_.confine(saved.path, t.dir, t.checkpoint_dir);
    try {
      return confined_checkpoints_.confine(saved.path, t.dir, t.dir);
    } catch (const protocol::ProtocolError& e) {
      throw protocol::ProtocolError(std::string(e.what()) + " nor (absolute) its folder " +
                                    t.checkpoint_dir + " on " + t.placement.hostlist +
                                    "'s own disk");
    }
  }();
  const fs::path& absolute = checkpoint.resolved;
  const std::string& relative = checkpoint.relative;
  if (relative.size() > study_.writer->max_checkpoint_path())
    throw protocol::ProtocolError(
        "CHECKPOINT: 'path' resolves to " + std::to_string(relative.size()) +
        " bytes relative to the study's folder; the results file stores at most " +
        std::to_string(study_.writer->max_checkpoint_path()));
  const std::uint64_t bytes = saved.size;
  if (!pbt_.takes_checkpoint_of(t.trial)) {
    log_line("trial " + std::to_string(t.trial) + ": checkpoint " + relative +
             " ignored: the trial was exploited and resumes from its donor's");
    return;
  }
  study_.writer->checkpoint(t.trial, step, store::unix_time_s(), relative, bytes);
  study_.checkpoints[t.trial] = {relative, step};
  if (remover_) remover_->recorded(t.trial, step, relative, bytes);
  if (!controller_->wants_checkpoint(t.trial, step)) return;
  // Copied off the loop; the decisions go on as if it were kept now (pbt_exploits.hpp).
  pbt_.keep(t.trial, step, absolute, relative);
  controller_->checkpoint_saved(t.trial, step);
  pbt_.carry_out();
  // Durable soon: a donor checkpoint whose row a crash lost would be missing on resume.
  // What depends on it waits for the commit: an exploit's decision (on_report) holds
  // for a flush that takes this row too, and any later row is durable only after it.
  study_.writer->commit_soon();
}

void Coordinator::on_closed(ConnectionId id, const std::string& reason) {
  if (backend_->owns(id)) return backend_->on_closed(id, reason);
  const auto trial = trials_.unbind(id);
  ActiveTrial* t = trial ? trials_.find(*trial) : nullptr;
  if (!t) return;
  // A connection that closes because its process ended is not a lost one.
  if (t->reporter == id && !t->process.poll()) t->lost_connection = true;
  backend_->trial_connection_closed(*t);
}

}  // namespace slurmtune::runtime
