#pragma once
// Search spaces: the domain of every hyperparameter and the mapping from a point of the
// unit interval to a value of that domain. Samplers produce unit points; domains turn
// them into values, so random, quasi-random and grid sampling share one set of rules.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/space/param_value.hpp"

namespace slurmtune::core {

enum class DomainKind {
  Uniform,         ///< real in [low, high)
  LogUniform,      ///< real in [low, high), uniform in log space; low > 0
  QUniform,        ///< uniform rounded to a multiple of q (Ray's quniform: the grid holds 0)
  SteppedUniform,  ///< low, low+q, ... high (Optuna's float with a step: the grid starts at low)
  QLogUniform,     ///< loguniform rounded to a multiple of q
  RandInt,         ///< integer in [low, high)  (upper bound exclusive, as Ray Tune)
  QRandInt,        ///< integer in {low, low+q, ...} up to and including high
  LogRandInt,      ///< integer in [low, high), uniform in log space; low > 0
  Choice,          ///< one of the listed values, uniformly
  Grid,            ///< every listed value in turn (an axis of a grid search)
  Constant,        ///< always the same value
};

/// Spelling of a domain kind in the study file (`loguniform`, `choice`, ...).
std::string_view domain_keyword(DomainKind kind);
/// Inverse of domain_keyword(); nullopt for an unknown word.
std::optional<DomainKind> domain_kind_from_keyword(std::string_view word);

struct Domain {
  DomainKind kind = DomainKind::Constant;
  double low = 0.0;
  double high = 0.0;
  double q = 0.0;                  ///< quantum of q* kinds, the step of SteppedUniform
  std::vector<ParamValue> values;  ///< Choice, Grid, Constant (one value)

  /// Whether this domain consumes one coordinate of the sampler's unit cube.
  bool is_sampled() const { return kind != DomainKind::Grid && kind != DomainKind::Constant; }
  bool is_integer() const;
  /// Choice, Grid or Constant: its values are listed, not a range.
  bool is_listed() const {
    return kind == DomainKind::Choice || kind == DomainKind::Grid || kind == DomainKind::Constant;
  }
  bool is_log() const;
  /// SteppedUniform: how many steps from low to high (a whole number; the last value is
  /// high). 0 for other kinds.
  std::size_t steps() const;
  /// Value at unit coordinate u in [0, 1). Grid and Constant ignore u.
  ParamValue from_unit(double u) const;
  /// Position of a value inside the domain in [0, 1] (the inverse of from_unit, up to
  /// rounding); used by synthetic objectives that need a notion of distance.
  double to_unit(const ParamValue& value) const;
  /// The value of a numeric domain nearest to `x`: clamped to the bounds, rounded to q
  /// or to an integer as the kind says (model-based samplers propose raw numbers).
  ParamValue from_number(double x) const;
  /// Position of a listed value (choice, grid, constant); throws UsageError if absent.
  std::size_t index_of(const ParamValue& value) const;
  /// Whether `value` is one this domain can produce: a listed value, or a number of the
  /// right type inside the bounds (the upper bound included, as a recorded table may
  /// hold it). Used to keep a recorded configuration inside a narrower search space.
  bool admits(const ParamValue& value) const;
  /// `text` as a value of this domain's type (a number for numeric kinds, the listed
  /// value whose text or number it matches for choice, grid and constant); nullopt
  /// when it is not one. Reads recorded tables (CSV cells).
  std::optional<ParamValue> parse(std::string_view text) const;
  /// `given` (from a study file or an earlier study) as a value of this domain, or nullopt:
  /// a listed value (a number matches an equal number), a whole number of an integer
  /// domain below randint's excluded bound, a number of a real domain inside its bounds
  /// and on its step.
  std::optional<ParamValue> accept(const ParamValue& given) const;
  /// Why this domain is impossible (with the fix), or nullopt when it is valid.
  std::optional<std::string> problem() const;
  /// Short description, e.g. `loguniform [0.0001, 0.1]`.
  std::string describe() const;
};

/// `when = { parent = value }`: a parameter exists only while an earlier choice takes one
/// of the listed values (and is itself active).
struct Condition {
  std::size_t parent = 0;  ///< index of an earlier parameter, a choice
  std::vector<ParamValue> values;
  friend bool operator==(const Condition&, const Condition&) = default;
};

struct Parameter {
  Parameter() = default;
  Parameter(std::string name_, Domain domain_, std::vector<Condition> when_ = {})
      : name(std::move(name_)), domain(std::move(domain_)), when(std::move(when_)) {}

  std::string name;
  Domain domain;
  std::vector<Condition> when;  ///< all must hold; empty: always active
};

/// One value per parameter, in the search space's order.
struct Configuration {
  Configuration() = default;
  Configuration(std::vector<ParamValue> values_, std::vector<bool> active_ = {})
      : values(std::move(values_)), active(std::move(active_)) {}

  std::vector<ParamValue> values;
  /// Which parameters exist in this configuration (a conditional space); empty: all. An
  /// inactive parameter's entry in `values` is a placeholder that means nothing.
  std::vector<bool> active;
  bool is_active(std::size_t p) const { return active.empty() || active[p]; }
  friend bool operator==(const Configuration&, const Configuration&) = default;
  template <class Archive>  // a snapshot (core/state_archive.hpp)
  void serialize(Archive& archive) {
    archive(values, active);
  }
};

/// Values chosen in advance for some parameters (a configuration to try first: Optuna's
/// enqueue_trial, Ray Tune's points_to_evaluate); the others are suggested as usual. One
/// entry per parameter, in the search space's order.
struct PartialConfiguration {
  std::vector<std::optional<ParamValue>> values;
  friend bool operator==(const PartialConfiguration&, const PartialConfiguration&) = default;
};

/// The value an inactive parameter holds in a Configuration (its domain's first value):
/// fixed, so that equal configurations compare equal.
ParamValue placeholder(const Domain& d);

class SearchSpace {
 public:
  SearchSpace() = default;
  explicit SearchSpace(std::vector<Parameter> parameters);

  const std::vector<Parameter>& parameters() const { return parameters_; }
  std::size_t size() const { return parameters_.size(); }
  /// Index of a parameter by name, or nullopt.
  std::optional<std::size_t> index_of(std::string_view name) const;
  /// Number of unit-cube coordinates a sampler must produce per configuration.
  std::size_t sampled_dimensions() const;
  /// Number of points of the grid axes' cross product (1 without grid axes); saturates
  /// at UINT64_MAX.
  std::uint64_t grid_size() const;

  /// `{"lr": 0.01, "optimizer": "adam"}` in parameter order; inactive parameters are
  /// left out.
  std::string to_json(const Configuration& config) const;

  /// Whether any parameter has a `when`.
  bool conditional() const;
  /// Whether parameter p is active given the values (and activity) of the parameters
  /// before it; `active` holds at least p entries.
  bool is_active(std::size_t p, const std::vector<ParamValue>& values,
                 const std::vector<bool>& active) const;
  /// Sets `config.active` from its values, in order (cleared for an unconditional
  /// space), and puts each inactive parameter's placeholder in place.
  void resolve_activity(Configuration& config) const;

 private:
  std::vector<Parameter> parameters_;
};

}  // namespace slurmtune::core
