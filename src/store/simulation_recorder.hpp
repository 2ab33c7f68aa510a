#pragma once
// Records a simulated study into a results file, so `slurmtune status`, `best`, `export`
// and the Python module work on simulations exactly as on real runs.
#include "core/simulation/simulation.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::store {

class SimulationRecorder final : public core::ForwardingObserver {
 public:
  SimulationRecorder(StudyWriter& writer, core::SimulationObserver* next = nullptr)
      : ForwardingObserver(next), writer_(writer) {}

  void trial_started(core::TrialId t, const core::Configuration& c, int bracket,
                     const core::SuggestionInfo& info, double time_s) override {
    writer_.trial_started(t, c, bracket, time_s, info);
    ForwardingObserver::trial_started(t, c, bracket, info, time_s);
  }
  void trial_resumed(core::TrialId t, double time_s, const core::ResumeReason* why) override {
    writer_.trial_resumed(t, time_s, why);
    ForwardingObserver::trial_resumed(t, time_s, why);
  }
  void trial_exploited(core::TrialId t, const core::Exploit& e, double time_s) override {
    writer_.trial_exploited(t, e, time_s);
    ForwardingObserver::trial_exploited(t, e, time_s);
  }
  void reported(core::TrialId t, double step, const std::vector<double>& metrics,
                const core::ReportOutcome& o, double time_s) override {
    writer_.report(t, step, time_s, metrics, o);
    ForwardingObserver::reported(t, step, metrics, o, time_s);
  }
  void checkpoint_saved(core::TrialId t, double step, double time_s) override {
    writer_.checkpoint_saved(t, step, time_s);
    ForwardingObserver::checkpoint_saved(t, step, time_s);
  }
  void trial_ended(core::TrialId t, core::TrialEnd how, double time_s) override {
    writer_.trial_ended(t, how, time_s);
    ForwardingObserver::trial_ended(t, how, time_s);
  }
  void admissions_closed(double time_s) override {
    writer_.admissions_closed(time_s);
    ForwardingObserver::admissions_closed(time_s);
  }

 private:
  StudyWriter& writer_;
};

}  // namespace slurmtune::store
