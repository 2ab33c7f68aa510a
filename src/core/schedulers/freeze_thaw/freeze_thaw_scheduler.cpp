#include "core/schedulers/freeze_thaw/freeze_thaw_scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/schedulers/continuation_model.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {
namespace {
constexpr std::uint64_t kMixStream = 0x66726565746861ULL;  // "freetha"
}  // namespace

FreezeThawScheduler::FreezeThawScheduler(const SchedulerSpec& spec, Mode mode, std::uint64_t seed)
    : Scheduler(mode),
      rungs_(spec, mode),
      promotion_mix_(spec.promotion_mix),
      cost_(spec.job_cost),
      seed_(seed) {}

void FreezeThawScheduler::add_trial(TrialId trial, std::optional<int> bracket) {
  rungs_.add_trial(trial, bracket);
  next_trial_ = std::max(next_trial_, trial + 1);
  ++jobs_;
}

std::optional<FreezeThawScheduler::Choice> FreezeThawScheduler::promotion_rule(bool may_start_new) {
  if (const auto trial = rungs_.promotable_trial())
    return Choice{trial, ResumeReason{ResumeReason::Rule::Promotion, 0, std::nullopt, 0, 0}};
  if (may_start_new) return Choice{};
  return std::nullopt;
}

std::optional<FreezeThawScheduler::Choice> FreezeThawScheduler::choose(bool may_start_new) {
  const auto paused = rungs_.paused_trials();
  if (paused.empty()) return may_start_new ? std::optional<Choice>(Choice{}) : std::nullopt;
  Xoshiro256 coin(derive_seed(seed_, kMixStream, jobs_));
  if (!model_ || coin.uniform01() < promotion_mix_) return promotion_rule(may_start_new);
  std::vector<ContinuationQuery> queries;
  for (const auto& p : paused)
    queries.push_back({p.trial, p.next_milestone});
  const auto scores = model_->score_jobs(next_trial_, rungs_.first_milestone(), queries);
  if (!scores) return promotion_rule(may_start_new);
  // Expected improvement per unit of resource the job trains (a resumption trains from
  // its rung to the next; a start from nothing to the first rung), or per second that
  // takes once the model knows every job's step cost.
  bool timed = cost_ == JobCost::Seconds && scores->start.seconds;
  for (const auto& r : scores->resumes)
    timed = timed && r.seconds;
  const auto rate = [&](const JobExpectation& job, double from, double to) {
    if (cost_ == JobCost::None) return job.improvement;
    return job.improvement / ((to - from) * (timed ? *job.seconds : 1.0));
  };
  const double start = rate(scores->start, 0, rungs_.first_milestone());
  std::size_t best = 0;
  double best_rate = -1;
  for (std::size_t k = 0; k < paused.size(); ++k) {
    const double r = rate(scores->resumes[k], paused[k].milestone, paused[k].next_milestone);
    if (r > best_rate) {  // ties go to the lower id (the older trial)
      best_rate = r;
      best = k;
    }
  }
  if (best_rate >= start)
    return Choice{paused[best].trial, ResumeReason{ResumeReason::Rule::Model, 0,
                                                   scores->resumes[best].value, best_rate, start}};
  if (may_start_new) return Choice{};
  // No start allowed and the model prefers one: the promotion rule still runs the rung's
  // top 1/eta on (admissions closed: otherwise the study would stop short of max_t).
  return promotion_rule(false);
}

std::optional<Job> FreezeThawScheduler::next_job(bool may_start_new) {
  const auto choice = choose(may_start_new);
  if (!choice) return std::nullopt;
  if (!choice->resume)
    return Job{Job::Kind::Start, 0, rungs_.first_milestone(), std::nullopt, std::nullopt};
  Job job = rungs_.resume(*choice->resume);
  job.reason = choice->reason;
  job.reason->until = job.until;
  ++jobs_;
  return job;
}

std::vector<TrialId> FreezeThawScheduler::take_dropped() {
  if (!rungs_.settled() || choose(false)) return {};
  return rungs_.drop_paused();
}

void FreezeThawScheduler::save_state(StateOut& archive) const {
  rungs_.save_state(archive);
  archive(next_trial_, jobs_);
}
void FreezeThawScheduler::load_state(StateIn& archive) {
  rungs_.load_state(archive);
  archive(next_trial_, jobs_);
}

}  // namespace slurmtune::core
