// `[scheduler] type = "pbt"`: Ray Tune's PopulationBasedTraining options, and
// `[scheduler.mutations]` (Ray's hyperparam_mutations) naming parameters of [search].
#include <algorithm>
#include <cmath>
#include <limits>

#include "config/section_readers.hpp"
#include "config/study_file.hpp"

namespace slurmtune::config {
namespace {

core::PbtMutation mutation_of(const TableReader& r, const core::SearchSpace& space,
                              const std::string& name, const toml::node& body) {
  const auto at = [&](const std::string& problem) -> core::PbtMutation {
    r.fail_at(body, "mutations." + name, problem);
  };
  const auto index = space.index_of(name);
  if (!index) {
    return at("is not a parameter of [search]" + parameter_hint(name, space.parameters()));
  }
  core::PbtMutation m;
  m.param = *index;
  m.name = name;
  m.domain = space.parameters()[*index].domain;
  if (!m.domain.is_sampled())
    return at("is a " + std::string(core::domain_keyword(m.domain.kind)) +
              " in [search]; PBT mutates sampled parameters only");
  if (const auto word = body.value<std::string>()) {
    if (*word != "resample")
      return at("must be \"resample\" (from its [search] domain) or a list of values");
    return m;
  }
  const toml::array* list = body.as_array();
  if (!list || list->empty())
    return at("must be \"resample\" (from its [search] domain) or a non-empty list of values");
  for (const auto& item : *list) {
    const auto value = scalar(item);
    if (!value || !m.domain.admits(*value))
      r.fail_at(item, "mutations." + name,
                "value " + (value ? core::to_json(*value) : toml_type_name(item)) +
                    " is not one of its [search] domain, " + m.domain.describe());
    m.values.push_back(*value);
  }
  return m;
}

}  // namespace

void read_pbt(TableReader& r, const core::SearchSpace& space, core::PbtSpec& s) {
  if (!r.has("perturbation_interval"))
    r.fail("perturbation_interval",
           "is required for pbt: the resource between two perturbations of a trial, e.g. 4");
  read_positive(r, "perturbation_interval", s.perturbation_interval);
  read_in_range(r, "burn_in_period", s.burn_in_period, 0, std::numeric_limits<double>::max(),
                "0 or more");
  if (const auto q = r.number("quantile_fraction")) {  // (0, 0.5]: open below
    if (!(*q > 0 && *q <= 0.5)) r.fail("quantile_fraction", "must be in (0, 0.5]");
    s.quantile_fraction = *q;
  }
  read_in_range(r, "resample_probability", s.resample_probability, 0, 1, "in [0, 1]");
  if (const auto factors = r.numbers("perturbation_factors")) {
    if (factors->empty())
      r.fail("perturbation_factors", "must list at least one factor, e.g. [1.2, 0.8]");
    for (const double f : *factors)
      if (!(f > 0) || !std::isfinite(f)) r.fail("perturbation_factors", "must be positive");
    s.perturbation_factors = *factors;
  }
  if (const auto synch = r.boolean("synch")) s.synch = *synch;
  const toml::node* mutations = r.node("mutations");
  const toml::table* table = mutations ? mutations->as_table() : nullptr;
  if (!table || table->empty())
    r.fail("mutations",
           "is required for pbt: a [scheduler.mutations] table naming what may change, e.g. "
           "lr = \"resample\" or batch = [32, 64, 128]");
  for (const auto& [key, body] : *table)
    s.mutations.push_back(mutation_of(r, space, std::string(key.str()), body));
  // Explored in [search] order (each draws from the scheduler's stream in turn).
  std::sort(s.mutations.begin(), s.mutations.end(),
            [](const auto& a, const auto& b) { return a.param < b.param; });
}

}  // namespace slurmtune::config
