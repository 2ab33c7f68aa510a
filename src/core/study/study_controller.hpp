#pragma once
// The decisions of a live study, free of clocks, sockets and processes: which trial to
// launch on a free slot, what a report means for its trial, what a trial's exit means
// (ended, paused, retried, or left for the next session), and when the study stops
// admitting trials. The coordinator of `slurmtune run` feeds it events and carries out
// its answers; tests feed it scripted events. Deterministic given the seed.
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/search/suggester.hpp"
#include "core/study/best_trials.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::core {

/// The error of a paused trial the scheduler gave up on when the study ended: not ended
/// for good, a later session with room for more trials may resume it.
inline constexpr const char* kDroppedByScheduler = "dropped by the scheduler";

/// Receives what the results file must record, in the order it happens. `time_s` is the
/// time the driver stamped (StudyController::stamp), which the record must keep: the
/// sampler learnt step costs from it. NaN when the driver stamps nothing.
class StudyObserver {
 public:
  virtual ~StudyObserver() = default;
  virtual void trial_started(TrialId, const Configuration&, int /*bracket*/, const SuggestionInfo&,
                             double /*time_s*/) {}
  /// A paused trial was promoted; `why`: the scheduler's reason, when it gives one.
  virtual void trial_resumed(TrialId, const ResumeReason* /*why*/, double /*time_s*/) {}
  /// An attempt failed and the trial will run again from its last checkpoint.
  virtual void trial_retried(TrialId, const std::string& /*error*/) {}
  virtual void trial_ended(TrialId, TrialEnd, const std::string& /*error*/) {}
  virtual void admissions_closed() {}
  /// PBT: the trial will resume from the donor's checkpoint with `exploit.config`
  /// (decided at a report; it leaves, paused, and the scheduler resumes it later).
  virtual void trial_exploited(TrialId, const Exploit& /*exploit*/) {}
  /// A checkpoint the scheduler asked for was saved (PBT may clone it from now on).
  virtual void checkpoint_saved(TrialId, double /*step*/) {}
};

/// A trial to launch now.
struct TrialLaunch {
  enum class Kind {
    Start,    ///< a new trial
    Resume,   ///< a paused trial the scheduler promoted
    Retry,    ///< a failed attempt, run again (from its checkpoint)
    Restart,  ///< running when the previous session ended (from its checkpoint)
  };
  Kind kind = Kind::Start;
  TrialId trial = 0;
  Configuration config;
  std::uint64_t attempt = 0;  ///< failed attempts so far
};
std::string_view to_string(TrialLaunch::Kind kind);

/// What the study tells a trial after a report (and tells ranks that ask).
enum class Instruction {
  Continue,
  Stop,      ///< the scheduler stopped it, or the study is over (budget, threshold)
  Pause,     ///< checkpoint and exit; the scheduler may resume it later
  Complete,  ///< it has run max_t: exit
  Suspend,   ///< the orchestrator is shutting down: checkpoint and exit, resumed next session
};
std::string_view to_string(Instruction instruction);
/// The decision word clients see: continue, stop or pause (Suspend is a pause).
std::string_view decision_word(Instruction instruction);

/// How many trials the study starts in all: max_trials, or the grid's size when smaller.
std::uint64_t trial_cap(const StudySpec& spec);

struct ReportVerdict {
  ReportOutcome outcome;  ///< the scheduler's answer (default when `duplicate`)
  Instruction instruction = Instruction::Continue;
  bool duplicate = false;  ///< a step at or below one already reported: not judged, not recorded
};

/// What a trial's exit meant.
enum class ExitMeaning { Ended, Paused, Retried, Unfinished };

struct StudyCounts {
  std::uint64_t started = 0, running = 0, paused = 0, completed = 0, stopped = 0, failed = 0,
                retries = 0, reports = 0;
};

/// Where a resumed study stands (from store::resume_study).
struct StudyResumePoint {
  std::uint64_t started = 0;                  ///< trials started so far
  std::vector<Configuration> configs;         ///< every started trial's, by id
  std::vector<TrialId> restart;               ///< running when the last session ended
  std::vector<TrialId> paused;                ///< paused, the scheduler holds them
  std::map<TrialId, std::uint64_t> failures;  ///< failed attempts per trial
  std::map<TrialId, double> last_step;        ///< last recorded step per live trial
  StudyCounts counts;                         ///< ended trials by kind
  bool admissions_closed = false;
  /// Every trial's best report that has not failed, earlier sessions' ended ones too.
  std::vector<BestSoFar> best_values;
};

/// Whether work resuming after `step` reaches its next checkpoint before the allocation
/// ends (AllocationClock::fits); empty: everything fits.
using FitsBeforeEnd = std::function<bool(double step)>;

class StudyController {
 public:
  /// `suggester` has seen every recorded event when `resumed` (store::resume_study).
  StudyController(const StudySpec& spec, std::unique_ptr<Scheduler> scheduler,
                  std::unique_ptr<Suggester> suggester, StudyObserver& observer,
                  const StudyResumePoint* resumed = nullptr);

  /// The time of the starts, resumptions and reports the next calls make (the results
  /// file's clock: Unix seconds), which the driver records with them: the sampler learns
  /// what a step costs from it (Suggester::began_at, reported_at).
  void stamp(double time_s) { now_ = time_s; }
  /// The trial to launch on a free slot, or nullopt when there is none now. Closes
  /// admissions (max_trials, time budget) as a side effect. `elapsed_s`: run time so far.
  /// Work that `fits` refuses is held for the next session: a new trial is not started, a
  /// retry or restart waits, a promotion is recorded and left to the next session.
  std::optional<TrialLaunch> next_launch(double elapsed_s, const FitsBeforeEnd& fits = {});
  /// The last next_launch held work back for the allocation's end.
  bool held_for_clock() const { return held_for_clock_; }
  /// The last step a trial reported (0 before any): where a relaunch resumes.
  double last_step(TrialId trial) const;
  /// One report of a running trial; `value` is the scheduled metric (NaN if absent).
  ReportVerdict report(TrialId trial, double step, double value);
  /// The same with the report's value of every metric column (StudySpec::metrics, NaN
  /// where absent): the first is the scheduled one; samplers for several objectives and
  /// constraints learn from the others.
  ReportVerdict report(TrialId trial, double step, const std::vector<double>& metrics);
  /// The last instruction given to a running trial (for ranks that ask).
  Instruction instruction(TrialId trial) const;
  /// Whether the scheduler asked the trial for a checkpoint that a checkpoint saved at
  /// `step` provides (PBT: at a perturbation point, for others to clone).
  bool wants_checkpoint(TrialId trial, double step) const;
  /// Resumed study: the scheduler still awaits that checkpoint of a trial that restarts.
  void expect_checkpoint(TrialId trial, double step);
  /// That checkpoint exists now (kept where no later save of the trial can change it);
  /// NaN: it will not come (called by trial_exited).
  void checkpoint_saved(TrialId trial, double step);
  /// The trial's processes are gone. `clean`: exit status 0 and no failure reported.
  ExitMeaning trial_exited(TrialId trial, bool clean, const std::string& error);

  /// Time budget: closes admissions and tells running trials to stop; true if that
  /// happened now.
  bool check_budget(double elapsed_s);
  /// Graceful exit of the orchestrator: no more launches; running trials are told to
  /// checkpoint and exit and stay unfinished, for the next session to restart.
  void begin_shutdown();
  bool shutting_down() const { return shutting_down_; }
  /// The trial's resources are going away (its allocation ends): it is told to suspend
  /// (checkpoint and exit), and however it then exits it runs again in this session,
  /// from its checkpoint, on other resources, without counting as a failure.
  void evict(TrialId trial);
  /// True while the study has work that a later session could do: admissions still
  /// open, trials to restart or interrupted, paused trials the scheduler could resume,
  /// or trials still running. After a halt (budget, threshold) only interrupted trials
  /// count. `run` exits 75 (requeue) when it stops early with this true.
  bool more_work_left() const;
  /// The trial's files for its next launch are being made (PBT's clone of a donor's
  /// checkpoint, off the coordinator's loop): until release_launch, next_launch passes
  /// over it (another slot's work goes first) and it waits in the relaunch queue. A
  /// hold delays the launch in time only: no decision depends on it.
  void hold_launch(TrialId trial) { ++launch_holds_[trial]; }
  /// From now on each exploit holds its trial's launch as it is decided (PBT in
  /// `slurmtune run`, which releases it once the donor's checkpoint is cloned).
  void hold_exploited_launches() { hold_exploited_ = true; }
  void release_launch(TrialId trial);
  /// A launch next_launch gave that cannot start on the free slot it was for (its
  /// checkpoint is on another node's own disk, and that node is full): back in line,
  /// not running, and held until release_launch (a slot there freed, or the node is gone).
  void defer_launch(TrialLaunch launch);
  /// Whether any trial's launch is held, or a new trial's waits for the suggestion being
  /// made for it (Suggester::ready): the study is not over while one is.
  bool launches_held() const { return !launch_holds_.empty() || awaiting_suggestion_; }

  std::vector<TrialId> running() const;
  bool is_running(TrialId trial) const {
    const TrialBook* b = find_book(trial);
    return b && b->live;
  }
  const StudyCounts& counts() const { return counts_; }
  /// Fail fast: once `attempts` attempts in a row have failed alike (the same first line
  /// and last stderr line, core::failure_summary) before any report arrived, the study
  /// halts with that line instead of burning its budget on a broken command (a missing
  /// script, a python3 without the trial's packages). 0: never. 3 by default.
  void set_fail_fast(std::size_t attempts) { fail_fast_after_ = attempts; }
  /// The halt was the fail-fast rule's: the run failed.
  bool failed_fast() const { return failed_fast_; }
  /// The best report of a trial that has not failed (BestTrials).
  std::optional<BestSoFar> best() const { return best_.best(); }
  const Configuration& config_of(TrialId trial) const { return configs_.at(trial); }
  const std::string& halt_reason() const { return halt_reason_; }
  const StudySpec& spec() const { return spec_; }
  double max_resource() const { return scheduler_->max_resource(); }

 private:
  // What the controller keeps of a trial that has not ended, found by its id on every
  // report: one record in a table by trial id (one cache line), where four hash maps of
  // 16,384 running trials each cost a miss or two per report.
  struct TrialBook {
    bool live = false;                         // launched and not exited
    Instruction told = Instruction::Continue;  // the last verdict of a report, while live
    std::optional<double> last_step;           // last judged step, across attempts
    std::optional<Observation> last;           // last judged report, for end_trial
    std::optional<double> wanted_checkpoint;   // asked for at this step, not saved yet
  };

  bool may_admit(double elapsed_s) const;
  void close_admissions();
  void halt(const std::string& reason);
  void collect_dropped();
  void note_value(TrialId trial, double step, double value);
  void apply_exploits();  // the scheduler's new exploits: configurations, observer
  void end(TrialId trial, TrialEnd how, const std::string& error);
  /// A failed attempt: whether the fail-fast rule halts the study on it.
  bool fails_fast(const std::string& error);
  /// The book of a running trial (UsageError for one that is not).
  TrialBook& live(TrialId trial);
  const TrialBook& live(TrialId trial) const;
  TrialBook& book(TrialId trial);
  const TrialBook* find_book(TrialId trial) const;
  void set_live(TrialId trial, bool live);

  const StudySpec& spec_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<Suggester> suggester_;
  std::vector<Configuration> configs_;  // by trial id
  StudyObserver& observer_;
  std::uint64_t max_trials_;
  // By trial id; a deque, so that growing it never copies every trial's record at once.
  std::deque<TrialBook> books_;
  std::size_t live_count_ = 0;         // books_ with `live`
  std::vector<TrialLaunch> relaunch_;  // retries and restarts, served before new work
  std::map<TrialId, std::uint64_t> failures_;
  std::uint64_t interrupted_ = 0;             // suspended by a shutdown, for the next session
  bool held_for_clock_ = false;               // the last next_launch held work back
  bool awaiting_suggestion_ = false;          // the last next_launch waited for a suggestion
  std::set<TrialId> resume_when_exited_;      // promoted before their paused process exited
  std::set<TrialId> evicted_;                 // told to suspend, to restart in this session
  std::map<TrialId, unsigned> launch_holds_;  // hold_launch minus release_launch, when > 0
  bool hold_exploited_ = false;
  StudyCounts counts_;
  BestTrials best_;
  std::size_t fail_fast_after_ = 3;
  std::string alike_failure_;  // failure_summary of the streak of failures
  std::size_t alike_failures_ = 0;
  bool failed_fast_ = false;
  bool closed_ = false;
  bool halted_ = false;
  bool shutting_down_ = false;
  std::string halt_reason_;
  double now_ = std::numeric_limits<double>::quiet_NaN();  // stamp()
};

}  // namespace slurmtune::core
