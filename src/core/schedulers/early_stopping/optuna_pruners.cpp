#include "core/schedulers/early_stopping/optuna_pruners.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {

std::uint32_t crc32(std::string_view bytes) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xFFFFFFFFU;
  for (const char ch : bytes)
    crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFU;
}

namespace {
// Exact integer power; Optuna computes rung budgets with Python integers.
std::int64_t ipow(std::int64_t base, std::int64_t exp) {
  std::int64_t r = 1;
  for (std::int64_t i = 0; i < exp; ++i) {
    if (r > INT64_MAX / base) return INT64_MAX;
    r *= base;
  }
  return r;
}

// min_resource * rf^exponent, or nullopt past int64: a rung no report can reach (Python's
// integers would go on; a step of 2^63 and more climbs every representable rung, then
// stops instead of looping for ever).
std::optional<std::int64_t> rung_budget(std::int64_t min_resource, std::int64_t rf,
                                        std::int64_t exponent) {
  const std::int64_t power = ipow(rf, exponent);
  if (power == INT64_MAX || (min_resource > 0 && power > INT64_MAX / min_resource))
    return std::nullopt;
  return min_resource * power;
}
}  // namespace

ReportOutcome OptunaHalvingLadder::prune(int& passed, double step, double score,
                                         std::int64_t min_resource, const Scheduler& owner) {
  ReportOutcome outcome;
  // Several rungs may be passed by one report, as in Optuna's `while True` loop.
  while (true) {
    const auto budget = rung_budget(min_resource, rf_, rate_ + passed);
    if (!budget || step < static_cast<double>(*budget)) return outcome;
    outcome.rung = passed;
    outcome.milestone = static_cast<double>(*budget);
    if (std::isnan(score)) {  // NaN is pruned before it is recorded
      outcome.decision = SchedulerDecision::Stop;
      return outcome;
    }
    if (rungs_.size() <= static_cast<std::size_t>(passed))
      rungs_.resize(static_cast<std::size_t>(passed) + 1);
    auto& rung = rungs_[static_cast<std::size_t>(passed)];
    rung.insert(score);  // the trial's own value competes
    const auto n = static_cast<std::int64_t>(rung.size());
    if (n <= bootstrap_) {
      outcome.decision = SchedulerDecision::Stop;
      return outcome;
    }
    // Promotable iff among the top n // rf values (at least the best one); ties kept.
    const std::int64_t index = std::max<std::int64_t>(n / rf_ - 1, 0);
    const double cutoff = rung.kth(static_cast<std::size_t>(n - 1 - index));
    outcome.cutoff = owner.mode() == Mode::Min ? -cutoff : cutoff;
    if (!(cutoff <= score)) {
      outcome.decision = SchedulerDecision::Stop;
      return outcome;
    }
    ++passed;
  }
}

OptunaSuccessiveHalvingScheduler::OptunaSuccessiveHalvingScheduler(const SchedulerSpec& spec,
                                                                   Mode mode)
    : Scheduler(mode),
      max_t_(spec.max_t),
      min_resource_(spec.min_resource),
      ladder_(static_cast<std::int64_t>(spec.reduction_factor), spec.min_early_stopping_rate,
              spec.bootstrap_count) {}

void OptunaSuccessiveHalvingScheduler::add_trial(TrialId trial, std::optional<int>) {
  passed_.insert_or_assign(trial, 0);
}

ReportOutcome OptunaSuccessiveHalvingScheduler::report(TrialId trial, double step, double value) {
  const auto it = passed_.find(trial);
  if (it == passed_.end()) throw_unknown_trial(trial);
  if (!min_resource_) {
    // "auto": max(last step of the longest completed trial // 100, 1), fixed once known.
    if (longest_completed_ < 0) return ReportOutcome{};
    min_resource_ = std::max<std::int64_t>(longest_completed_ / 100, 1);
  }
  return ladder_.prune(it->second, step, score(value), *min_resource_, *this);
}

void OptunaSuccessiveHalvingScheduler::end_trial(TrialId trial, TrialEnd how,
                                                 std::optional<Observation> last) {
  // Optuna records a trial that finishes with NaN as FAIL: it does not size the rungs.
  if (how == TrialEnd::Completed && last && !std::isnan(last->value))
    longest_completed_ = std::max(longest_completed_, static_cast<std::int64_t>(last->step));
  passed_.erase(trial);
}

OptunaHyperbandScheduler::OptunaHyperbandScheduler(const SchedulerSpec& spec, Mode mode,
                                                   std::string study_name)
    : Scheduler(mode),
      max_t_(spec.max_t),
      min_resource_(spec.min_resource.value_or(1)),
      max_resource_(spec.max_resource),
      rf_(static_cast<std::int64_t>(spec.reduction_factor)),
      bootstrap_(spec.bootstrap_count),
      study_name_(std::move(study_name)) {
  try_initialise();
}

void OptunaHyperbandScheduler::try_initialise() {
  if (!ladders_.empty()) return;
  if (!max_resource_) {
    if (longest_completed_ < 0) return;
    max_resource_ = longest_completed_ + 1;  // Optuna: max(completed last steps) + 1
  }
  const auto n_brackets =
      static_cast<std::int64_t>(std::floor(
          std::log(static_cast<double>(*max_resource_) / static_cast<double>(min_resource_)) /
          std::log(static_cast<double>(rf_)))) +
      1;
  std::uint64_t total = 0;
  for (std::int64_t b = 0; b < n_brackets; ++b) {
    const std::int64_t s = n_brackets - 1 - b;
    const double budget = std::ceil(static_cast<double>(n_brackets) *
                                    static_cast<double>(ipow(rf_, s)) / static_cast<double>(s + 1));
    total += static_cast<std::uint64_t>(budget);
    cumulative_budgets_.push_back(total);
    ladders_.emplace_back(rf_, b, bootstrap_);
  }
}

int OptunaHyperbandScheduler::bracket_by_hash(TrialId trial) const {
  if (ladders_.empty()) return 0;
  const std::uint64_t n =
      crc32(study_name_ + "_" + std::to_string(trial)) % cumulative_budgets_.back();
  for (std::size_t b = 0; b < cumulative_budgets_.size(); ++b)
    if (n < cumulative_budgets_[b]) return static_cast<int>(b);
  return static_cast<int>(cumulative_budgets_.size()) - 1;
}

int OptunaHyperbandScheduler::bracket_of(TrialId trial) const {
  const auto it = trials_.find(trial);
  if (it != trials_.end() && it->second.forced_bracket) return *it->second.forced_bracket;
  return bracket_by_hash(trial);
}

void OptunaHyperbandScheduler::add_trial(TrialId trial, std::optional<int> bracket) {
  if (bracket && *bracket < 0)
    throw InputError("trial " + std::to_string(trial) + ": bracket must be >= 0");
  trials_.insert_or_assign(trial, TrialState{bracket, 0});
}

ReportOutcome OptunaHyperbandScheduler::report(TrialId trial, double step, double value) {
  const auto it = trials_.find(trial);
  if (it == trials_.end()) throw_unknown_trial(trial);
  try_initialise();
  if (ladders_.empty()) return ReportOutcome{};  // max_resource "auto": nothing completed yet
  const int bracket = bracket_of(trial);
  if (bracket >= static_cast<int>(ladders_.size()))
    throw InputError("trial " + std::to_string(trial) + ": bracket " + std::to_string(bracket) +
                     " does not exist (Hyperband has " + std::to_string(ladders_.size()) + ")");
  return ladders_[static_cast<std::size_t>(bracket)].prune(it->second.passed, step, score(value),
                                                           min_resource_, *this);
}

void OptunaHyperbandScheduler::end_trial(TrialId trial, TrialEnd how,
                                         std::optional<Observation> last) {
  // Optuna records a trial that finishes with NaN as FAIL: it does not size the rungs.
  if (how == TrialEnd::Completed && last && !std::isnan(last->value))
    longest_completed_ = std::max(longest_completed_, static_cast<std::int64_t>(last->step));
  trials_.erase(trial);
}

SLURMTUNE_STATE(OptunaSuccessiveHalvingScheduler, min_resource_, longest_completed_, ladder_,
                passed_)
SLURMTUNE_STATE(OptunaHyperbandScheduler, max_resource_, longest_completed_, ladders_,
                cumulative_budgets_, trials_)

}  // namespace slurmtune::core
