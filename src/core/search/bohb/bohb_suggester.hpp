#pragma once
// BOHB's suggester (Falkner et al. 2018): its configuration generator (bohb_sampler.hpp)
// fed every judged rung as an observation at that rung's budget.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/search/bohb/bohb_sampler.hpp"
#include "core/search/model_options.hpp"
#include "core/search/suggester.hpp"

namespace slurmtune::core {

class BohbSuggester final : public Suggester {
 public:
  BohbSuggester(const SearchSpace& space, const BohbOptions& options, bool maximize,
                std::uint32_t seed);
  Suggestion suggest(TrialId trial) override;
  void started(TrialId trial, const Configuration& config) override;
  void reported(TrialId trial, double step, double value, const ReportOutcome& outcome) override;
  void ended(TrialId trial, TrialEnd how) override;
  void restore(const SamplerPosition& position) override;
  void save_state(StateOut& archive) const override;
  void load_state(StateIn& archive) override;

 private:
  struct TrialState {
    bool started = false;
    std::vector<double> vector;  // the configuration in BOHB's unit space
    std::optional<double> last_step, last_value;
    std::optional<double> observed_budget;  // the rung it was last observed at
    template <class Archive>
    void serialize(Archive& archive) {
      archive(started, vector, last_step, last_value, observed_budget);
    }
  };
  double loss(double value) const;

  SearchSpace space_;
  std::vector<std::size_t> sampled_;  // parameters BOHB models (constants are not)
  bool maximize_;
  bohb::BohbSampler sampler_;
  std::vector<TrialState> trials_;  // by trial id
};

}  // namespace slurmtune::core
