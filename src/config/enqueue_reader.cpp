// `[[enqueue]]`: configurations to try first, in order (Optuna's enqueue_trial, Ray
// Tune's points_to_evaluate). Each entry gives values for some parameters of [search];
// the sampler suggests the rest.
#include <algorithm>
#include <cmath>

#include "config/section_readers.hpp"
#include "config/study_file.hpp"
#include "core/text.hpp"

namespace slurmtune::config {
namespace {

using core::DomainKind;

// Whether a quantized value lies on its domain's grid: quniform and qloguniform take
// multiples of q, qrandint low + k q (stepped uniforms are checked by accept()). Ray's
// and slurmtune's samplers never draw anything else, so a value between the steps
// would be a configuration the study could not have suggested.
bool on_grid(const core::Domain& d, const core::ParamValue& value) {
  const auto whole = [](double k) {
    return std::abs(k - std::nearbyint(k)) <= 1e-9 * (1.0 + std::abs(k));
  };
  switch (d.kind) {
    case DomainKind::QUniform:
    case DomainKind::QLogUniform:
      return whole(core::as_number(value) / d.q);
    case DomainKind::QRandInt:
      return whole((core::as_number(value) - d.low) / d.q);
    default:
      return true;
  }
}

// An entry that fixes a conditional parameter fixes what its `when` tests, to values
// under which it exists: otherwise the value would be dropped (when the condition fails)
// or kept only by chance (when the sampler picks the parent).
void check_conditions(const TableReader& r, const toml::table& entry,
                      const core::SearchSpace& space, const core::PartialConfiguration& fixed) {
  for (std::size_t p = 0; p < space.size(); ++p) {
    const core::Parameter& parameter = space.parameters()[p];
    if (!fixed.values[p] || parameter.when.empty()) continue;
    for (const core::Condition& c : parameter.when) {
      const std::string& parent = space.parameters()[c.parent].name;
      const auto& given = fixed.values[c.parent];
      const bool holds =
          given && std::find(c.values.begin(), c.values.end(), *given) != c.values.end();
      if (holds) continue;
      r.fail_at(*entry.get(parameter.name), parameter.name,
                given ? "exists only while " + core::visible(parent) +
                            " is one of its when's "
                            "values, and this entry sets " +
                            core::visible(parent) + " = " + core::visible(core::to_json(*given)) +
                            "; drop it or change " + core::visible(parent)
                      : "exists only under its when on " + core::visible(parent) +
                            ", which this entry leaves to the sampler; give " +
                            core::visible(parent) + " too");
    }
  }
}

core::PartialConfiguration read_entry(const TableReader& r, const toml::table& entry,
                                      const core::SearchSpace& space) {
  core::PartialConfiguration out;
  out.values.resize(space.size());
  for (const auto& [key, node] : entry) {
    const std::string name(key.str());
    const auto index = space.index_of(name);
    if (!index)
      r.fail_at(node, name,
                "names no parameter of [search]" + parameter_hint(name, space.parameters()));
    const core::Domain& d = space.parameters()[*index].domain;
    if (d.kind == DomainKind::Grid)
      r.fail_at(node, name, "is a grid axis, which takes every value in turn; it cannot be fixed");
    const auto given = scalar(node);
    if (!given) r.fail_at(node, name, "must be a number, string or boolean");
    const auto value = d.accept(*given);
    if (!value)
      r.fail_at(node, name,
                core::visible(core::to_json(*given)) + " is not a value of " + d.describe());
    if (!on_grid(d, *value))
      r.fail_at(
          node, name,
          core::visible(core::to_json(*given)) + " is not on the grid of " + d.describe() + " (" +
              (d.kind == DomainKind::QRandInt ? "low + a multiple of q" : "a multiple of q") + ")");
    out.values[*index] = *value;
  }
  if (entry.empty())
    r.fail_at(entry, "entry", "names no parameter; give at least one, e.g. lr = 0.01");
  check_conditions(r, entry, space, out);
  // A constant is what it is: an entry that gives every other value is complete.
  for (std::size_t p = 0; p < space.size(); ++p)
    if (space.parameters()[p].domain.kind == DomainKind::Constant && !out.values[p])
      out.values[p] = space.parameters()[p].domain.values.front();
  return out;
}

}  // namespace

std::vector<core::PartialConfiguration> read_enqueue(const toml::node* node,
                                                     const core::StudySpec& study) {
  std::vector<core::PartialConfiguration> out;
  if (!node) return out;
  static const toml::table kNoTable;
  const TableReader r(kNoTable, "enqueue", study.path);
  const toml::array* entries = node->as_array();
  if (!entries || !entries->is_array_of_tables())
    r.fail_at(*node, "enqueue",
              "must be tables of values, each under its own [[enqueue]] header, e.g.\n"
              "  [[enqueue]]\n  lr = 0.01");
  if (study.sampler.kind == core::SamplerKind::Grid)
    r.fail_at(*node, "enqueue",
              "sampler \"grid\" tries every configuration in turn; [[enqueue]] goes with "
              "random, halton, tpe, bohb or mobster");
  for (const auto& entry : *entries) {
    if (out.size() == study.max_trials)
      r.fail_at(entry, "entry " + std::to_string(out.size() + 1),
                "max_trials is " + std::to_string(study.max_trials) +
                    ": no trial would run this configuration");
    out.push_back(read_entry(r, *entry.as_table(), study.space));
  }
  return out;
}

}  // namespace slurmtune::config
