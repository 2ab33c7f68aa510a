#include "runtime/coordinator/progress_report.hpp"

#include <cmath>
#include <sstream>

#include "core/number_text.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {

ProgressReport::ProgressReport(double interval_s, double silent_after_s)
    : interval_s_(interval_s), silent_after_s_(silent_after_s) {}

bool ProgressReport::due() const {
  return std::chrono::duration<double>(Clock::now() - last_).count() >= interval_s_;
}

std::string ProgressReport::silent_trials(
    const std::vector<std::pair<core::TrialId, double>>& quiet_s) const {
  std::string out;
  int named = 0, more = 0;
  for (const auto& [id, quiet] : quiet_s) {
    if (quiet < silent_after_s_) continue;
    if (named == 5) {
      ++more;
      continue;
    }
    ++named;
    // whole seconds, as doc/slurm.md shows them ("312 s", not "312.0 s")
    out += (out.empty() ? "; silent: trial " : ", trial ") + std::to_string(id) + " (" +
           std::to_string(std::llround(quiet)) + " s)";
  }
  if (more) out += " and " + std::to_string(more) + " more";
  return out;
}

void ProgressReport::print(bool final, const core::StudyController& controller,
                           const std::vector<std::pair<core::TrialId, double>>& quiet_s,
                           const std::string& loop) {
  const auto now = Clock::now();
  const double window = std::chrono::duration<double>(now - last_).count();
  const auto& c = controller.counts();
  const auto& spec = controller.spec();
  const double rate = window > 0 ? static_cast<double>(c.reports - reports_at_last_) / window : 0;
  std::ostringstream line;
  line << (final ? "summary: " : "progress: ") << "running " << c.running << ", paused " << c.paused
       << ", completed " << c.completed << ", stopped " << c.stopped << ", failed " << c.failed
       << " (retries " << c.retries << "), " << c.started << "/" << spec.max_trials << " started, "
       << c.reports << " reports";
  if (!final) line << ", " << core::format_double(std::round(rate * 10) / 10) << " reports/s";
  if (!final && !loop.empty()) line << ", " << loop;
  if (!final) {
    const std::string silent = silent_trials(quiet_s);
    line << silent;
    // A hung trial without a report timeout holds its slot, and the study, for ever.
    if (!silent.empty() && !spec.trial.report_timeout_s)
      line << " (a hung trial is never ended: set [trial] report_timeout_s to end and retry it)";
  }
  // Several objectives or constraints have no one best value to watch: the Pareto front
  // and the feasible trials are in `slurmtune status` and `best`.
  const bool one_best = !spec.multi_objective() && spec.constraints.empty();
  if (const auto& best = controller.best(); best && one_best)
    line << "; best " << spec.metric << " " << core::format_double(best->value) << " (trial "
         << best->trial << ", step " << core::format_double(best->step) << ")";
  log_line(line.str());
  if (final && !one_best)
    log_line(std::string(spec.multi_objective() ? "Pareto front" : "best feasible trial") +
             ": slurmtune status or slurmtune best on the results file");
  if (final && controller.best() && one_best)
    log_line("best configuration: " +
             spec.space.to_json(controller.config_of(controller.best()->trial)));
  last_ = now;
  reports_at_last_ = c.reports;
}

}  // namespace slurmtune::runtime
