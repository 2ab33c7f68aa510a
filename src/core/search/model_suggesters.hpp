#pragma once
// The model-based suggesters: TPE (Optuna 3.1's, tpe_sampler.hpp) and BOHB
// (bohb_sampler.hpp) over a slurmtune search space. Each keeps the study's history as
// its sampler needs it, updated event by event (no rescans), and maps configurations
// to the sampler's representation and back.
#include <optional>
#include <vector>

#include "core/search/bohb_sampler.hpp"
#include "core/search/suggester.hpp"

namespace slurmtune::core {

/// TPE: a parameter's Optuna distribution, by domain kind. Continuous q-domains are
/// sampled continuously and rounded to q afterwards (Optuna's step grid starts at low,
/// Ray's q-grid at 0); constants are not sampled. Grid axes are refused by the study
/// reader before this is reached.
tpe::Distribution tpe_distribution(const Domain& domain);

class TpeSuggester final : public Suggester {
 public:
  TpeSuggester(const SearchSpace& space, const tpe::TpeOptions& options, bool maximize,
               std::uint32_t seed);
  Suggestion suggest(TrialId trial) override;
  /// Optuna's trial with fixed parameters: they are not drawn (with multivariate, the
  /// joint draw happens and the fixed values take the place of theirs).
  Suggestion suggest_fixed(TrialId trial, const PartialConfiguration& fixed) override;
  void started(TrialId trial, const Configuration& config) override;
  void reported(TrialId trial, double step, double value, const ReportOutcome& outcome) override;
  void resumed(TrialId trial) override;
  void ended(TrialId trial, TrialEnd how) override;
  void restore(const SamplerPosition& position) override;

 private:
  tpe::TrialRecord& record(TrialId trial);
  Suggestion suggest_with(TrialId trial, const PartialConfiguration* fixed);
  SamplerPosition position() const;

  SearchSpace space_;
  std::vector<std::size_t> sampled_;  // parameters TPE samples (constants are not)
  tpe::TpeSampler sampler_;
  std::vector<tpe::TrialRecord> history_;  // by trial id
  bool group_ = false;
  std::optional<TrialId> suggested_;  // the trial suggest() suggested last
};

class BohbSuggester final : public Suggester {
 public:
  BohbSuggester(const SearchSpace& space, const BohbOptions& options, bool maximize,
                std::uint32_t seed);
  Suggestion suggest(TrialId trial) override;
  void started(TrialId trial, const Configuration& config) override;
  void reported(TrialId trial, double step, double value, const ReportOutcome& outcome) override;
  void ended(TrialId trial, TrialEnd how) override;
  void restore(const SamplerPosition& position) override;

 private:
  struct TrialState {
    bool started = false;
    std::vector<double> vector;  // the configuration in BOHB's unit space
    std::optional<double> last_step, last_value;
    std::optional<double> observed_budget;  // the rung it was last observed at
  };
  double loss(double value) const;

  SearchSpace space_;
  std::vector<std::size_t> sampled_;  // parameters BOHB models (constants are not)
  bool maximize_;
  bohb::BohbSampler sampler_;
  std::vector<TrialState> trials_;  // by trial id
};

}  // namespace slurmtune::core
