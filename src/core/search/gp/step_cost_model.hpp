#pragma once
// What a step costs (issue #43, item 2): each trial's seconds per unit of resource,
// measured from the times the results file records (from a beginning or a report to the
// trial's next report within one session: a start's or a resumption's launch is part of
// what the job cost), and for a configuration not measured, a Gaussian process over its
// encoded configuration of the logarithm of that cost. Every number comes from recorded
// events; the kernel is refitted on a ladder of measurement counts, from a fixed start, on
// measurements as they were taken (a trial's cost changes as it runs on, and a fit made
// later must not see the newer value: replay asks less often than the run did). Of the
// measurements, one per report, only those a fit at a ladder point still to come can see
// are kept (at most two fits' worth): a study of millions of reports keeps a few hundred
// bytes here, and the loop never copies a vector of every report as it grows.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "core/schedulers/scheduler.hpp"
#include "core/search/gp/gaussian_process.hpp"

namespace slurmtune::core {

class StepCostModel {
 public:
  /// `dims`: the length of a configuration's encoding; at most `max_observations` trials
  /// (the latest measured) condition the model.
  StepCostModel(std::size_t dims, std::size_t max_observations, double refit_growth,
                int fit_iterations);

  /// The trial's configuration, encoded (ConfigurationEncoder).
  void configured(TrialId trial, std::vector<double> features);
  void began_at(TrialId trial, double step, double time_s);
  void reported_at(TrialId trial, double step, double time_s);
  /// Trials running when the last session ended restart without a recorded beginning.
  void session_began();

  /// The trial's measured seconds per unit of resource, if it has run a timed stretch.
  std::optional<double> measured(TrialId trial) const;
  /// Seconds per unit of resource of each of `points` (rows of the encoding's length):
  /// nullopt until two trials are measured.
  std::optional<std::vector<double>> predicted(std::span<const double> points);

  /// Measurements taken, and of them those kept for fits still to come.
  std::uint64_t measurements() const { return measurements_; }
  std::size_t measurements_kept() const { return kept_.size(); }

  /// What it has measured and fitted (a snapshot); the posterior is a cache, made again
  /// from them when next asked.
  template <class Archive>
  void save(Archive& archive) const {
    archive(trials_, order_, measurements_, kept_, fits_);
  }
  template <class Archive>
  void load(Archive& archive) {
    archive(trials_, order_, measurements_, kept_, fits_);
    find_ladder_points();
    posterior_.reset();
  }

 private:
  struct Timing {
    std::vector<double> features;
    std::optional<std::pair<double, double>> open;  // (step, time) the running stretch began
    double seconds = 0, resource = 0;               // timed so far
    bool measured = false;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(features, open, seconds, resource, measured);
    }
  };
  struct Measurement {
    std::uint64_t index = 0;  // of all measurements taken
    TrialId trial = 0;
    double log_cost = 0;  // log seconds per unit of resource so far
    template <class Archive>
    void serialize(Archive& archive) {
      archive(index, trial, log_cost);
    }
  };
  Timing& timing(TrialId trial);
  void keep(Measurement measurement);
  void find_ladder_points();

  std::size_t dims_;
  std::size_t max_observations_;
  double refit_growth_;
  int fit_iterations_;
  std::vector<Timing> trials_;      // by trial id
  std::vector<TrialId> order_;      // trials in order of first measurement
  std::uint64_t measurements_ = 0;  // taken
  // The measurements a fit at the current or a later ladder point sees, by index.
  std::deque<Measurement> kept_;
  std::size_t point_ = 0, next_point_ = 0;           // the ladder's last point reached and its next
  std::map<std::size_t, gp::Hyperparameters> fits_;  // by ladder point
  std::optional<std::pair<std::uint64_t, gp::Posterior>> posterior_;  // for measurements_
  double shift_ = 0, scale_ = 1;                                      // of the log costs
};

}  // namespace slurmtune::core
