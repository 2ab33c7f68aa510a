#include <algorithm>
#include <cmath>

#include "config/name_forms.hpp"
#include "config/section_readers.hpp"
#include "config/study_file.hpp"
#include "core/number_text.hpp"
#include "core/text.hpp"

namespace slurmtune::config {
namespace {

using core::DomainKind;
using core::ParamValue;

[[noreturn]] void fail(const TableReader& r, const toml::node& at, std::string_view name,
                       const std::string& problem) {
  r.fail_at(at, name, problem);
}

// A string value goes into argv, the study file's enum names and every output as it is.
void check_text_value(const TableReader& r, const toml::node& at, std::string_view name,
                      const ParamValue& value) {
  const auto* text = std::get_if<std::string>(&value);
  if (!text || text->empty()) return;  // an empty choice is a real value (no flag)
  if (const auto problem = core::name_problem(*text))
    fail(r, at, name, "the value \"" + core::visible(*text) + "\" " + *problem);
}

core::Domain listed_domain(const TableReader& r, DomainKind kind, const toml::node& body,
                           std::string_view name) {
  const toml::array* array = body.as_array();
  const std::string word(core::domain_keyword(kind));
  if (!array)
    fail(r, body, name, word + " takes an array of values, e.g. { " + word + " = [32, 64] }");
  core::Domain d{kind, 0, 0, 0, {}};
  for (const auto& element : *array) {
    const auto v = scalar(element);
    if (!v) fail(r, element, name, word + " values must be numbers, strings or booleans");
    check_text_value(r, element, name, *v);
    d.values.push_back(*v);
  }
  return d;
}

// A bound or step as the double slurmtune keeps it (the samplers, the results file):
// refused unless finite and, for an integer, within +-2^53, where doubles hold every
// integer exactly (2^63 - 1 became -2^63 in the results file, which then read as damaged).
double exact_number(const TableReader& r, const toml::node& element, std::string_view name,
                    const std::string& word) {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (element.is_integer()) {
    const std::int64_t i = *element.value<std::int64_t>();
    if (i > kExact || i < -kExact)
      fail(r, element, name,
           word + " bound " + std::to_string(i) +
               " is beyond +-2^53 (9007199254740992), where slurmtune can no longer "
               "hold every integer exactly");
    return static_cast<double>(i);
  }
  const double d = *element.value<double>();
  if (!std::isfinite(d)) fail(r, element, name, word + " bounds must be finite numbers");
  return d;
}

core::Domain ranged_domain(const TableReader& r, DomainKind kind, const toml::node& body,
                           std::string_view name) {
  const std::string word(core::domain_keyword(kind));
  const bool quantized = kind == DomainKind::QUniform || kind == DomainKind::QLogUniform ||
                         kind == DomainKind::QRandInt;
  const std::string shape = quantized ? "[low, high, q]" : "[low, high]";
  const toml::array* array = body.as_array();
  if (!array || array->size() != (quantized ? 3U : 2U))
    fail(r, body, name,
         word + " takes " + shape + ", e.g. { " + word + " = " +
             (quantized ? "[0, 10, 2]" : "[1, 100]") + " }");
  std::vector<double> v;
  for (const auto& element : *array) {
    if (!element.is_number()) fail(r, element, name, word + " bounds must be numbers");
    v.push_back(exact_number(r, element, name, word));
  }
  // A range wider than the largest double makes every draw infinite.
  if (!std::isfinite(v[1] - v[0]))
    fail(r, body, name,
         word + " spans " + core::format_double(v[1] - v[0]) +
             ": high - low must be a finite double");
  return core::Domain{kind, v[0], v[1], quantized ? v[2] : 0.0, {}};
}

// `{ uniform = [low, high], step = q }`: Optuna's suggest_float(..., step=q).
core::Domain stepped_domain(const TableReader& r, std::string_view word, const toml::node& body,
                            const toml::node& step, std::string_view name) {
  if (word != "uniform")
    fail(r, step, name,
         "step goes with uniform only, as Optuna's suggest_float(..., step=q) (not on a log "
         "scale); for integers with a step use qrandint");
  if (!step.is_number()) fail(r, step, name, "step must be a number, e.g. step = 0.1");
  core::Domain d = ranged_domain(r, DomainKind::Uniform, body, name);
  d.kind = DomainKind::SteppedUniform;
  d.q = exact_number(r, step, name, "step");
  return d;
}

core::Domain read_domain(const TableReader& r, const toml::node& value, std::string_view name) {
  if (const auto constant = scalar(value))
    return core::Domain{DomainKind::Constant, 0, 0, 0, {*constant}};
  if (value.is_array())
    fail(r, value, name,
         "a bare array is ambiguous; write { choice = [...] } to sample one "
         "value or { grid = [...] } to try every value");
  const toml::table* table = value.as_table();
  const toml::node* step = table ? table->get("step") : nullptr;
  const bool conditional = table && table->contains("when");  // read by read_condition
  if (!table || table->size() != 1U + (step ? 1U : 0U) + (conditional ? 1U : 0U))
    fail(r, value, name,
         "expected one domain, e.g. { uniform = [0, 1] }, { choice = [\"a\", \"b\"] } "
         "or a constant (a stepped float adds step: { uniform = [0, 1], step = 0.1 })");
  auto entry = table->begin();  // toml++ iterators yield proxies: keep the iterator
  while (entry->first.str() == "step" || entry->first.str() == "when")
    ++entry;
  const toml::key& key = entry->first;
  const toml::node& body = entry->second;
  if (step) return stepped_domain(r, key.str(), body, *step, name);
  const auto kind = core::domain_kind_from_keyword(key.str());
  if (!kind) {
    std::vector<std::string> words;
    for (const auto k : {"uniform", "loguniform", "quniform", "qloguniform", "randint", "qrandint",
                         "lograndint", "choice", "grid", "constant"})
      words.emplace_back(k);
    fail(r, body, name,
         "unknown domain '" + std::string(key.str()) + "'" + did_you_mean(key.str(), words) +
             " (domains: uniform, loguniform, quniform, qloguniform, randint, "
             "qrandint, lograndint, choice, grid, constant)");
  }
  if (*kind == DomainKind::Constant) {
    const auto v = scalar(body);
    if (!v) fail(r, body, name, "constant takes a number, string or boolean");
    check_text_value(r, body, name, *v);
    return core::Domain{DomainKind::Constant, 0, 0, 0, {*v}};
  }
  if (*kind == DomainKind::Choice || *kind == DomainKind::Grid)
    return listed_domain(r, *kind, body, name);
  return ranged_domain(r, *kind, body, name);
}

// `when = { parent = value }` or `{ parent = [v1, v2] }`, all keys holding: the parents
// are earlier choices of `params` (define-by-run order, so no cycle can form).
std::vector<core::Condition> read_condition(const TableReader& r, const toml::table& search,
                                            const toml::node& when, std::string_view name,
                                            const std::vector<core::Parameter>& params,
                                            const std::vector<std::string>& later) {
  const toml::table* table = when.as_table();
  if (!table || table->empty())
    fail(r, when, name,
         "when takes a table of conditions on earlier choices, e.g. "
         "when = { optimizer = \"sgd\" }");
  std::vector<core::Condition> out;
  for (const auto& [key, wanted] : *table) {
    const std::string parent(key.str());
    std::size_t index = 0;
    while (index < params.size() && params[index].name != parent)
      ++index;
    if (index == params.size()) {
      if (parent == name) fail(r, wanted, name, "a parameter cannot depend on itself");
      const toml::table* other = search.get(parent) ? search.get(parent)->as_table() : nullptr;
      const toml::table* back =
          other && other->get("when") ? other->get("when")->as_table() : nullptr;
      if (back && back->contains(name))
        fail(r, wanted, name,
             "a cycle: '" + std::string(name) + "' depends on '" + core::visible(parent) +
                 "', which depends on '" + std::string(name) + "'; one of them must not");
      if (std::find(later.begin(), later.end(), parent) != later.end())
        fail(r, wanted, name,
             "depends on '" + core::visible(parent) + "', declared after it; declare '" +
                 core::visible(parent) +
                 "' first (parameters are chosen in the file's order, as define-by-run code "
                 "suggests them, so a condition names an earlier one)");
      fail(r, wanted, name,
           "when names '" + core::visible(parent) + "', which is no parameter of [search]" +
               parameter_hint(parent, params));
    }
    const core::Domain& d = params[index].domain;
    if (d.kind != DomainKind::Choice)
      fail(r, wanted, name,
           "when names '" + core::visible(parent) + "', a " +
               std::string(core::domain_keyword(d.kind)) +
               "; a condition names a choice (make it one, e.g. { choice = [true, false] })");
    core::Condition c{index, {}};
    const toml::array* list = wanted.as_array();
    const auto add = [&](const toml::node& node) {
      const auto v = scalar(node);
      const auto it = v ? std::find(d.values.begin(), d.values.end(), *v) : d.values.end();
      if (it == d.values.end())
        fail(r, node, name,
             "when " + core::visible(parent) + " = " +
                 (v ? core::visible(core::to_json(*v)) : toml_type_name(node)) + ": '" +
                 core::visible(parent) + "' has no such value (" + d.describe() + ")");
      c.values.push_back(*it);
    };
    if (list) {
      if (list->empty()) fail(r, wanted, name, "when lists no value of '" + parent + "'");
      for (const auto& item : *list)
        add(item);
    } else {
      add(wanted);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::string parameter_hint(std::string_view word, const std::vector<core::Parameter>& params) {
  std::vector<std::string> names;
  for (const auto& p : params)
    names.push_back(p.name);
  return did_you_mean(word, names);
}

std::optional<ParamValue> scalar(const toml::node& n) {
  if (n.is_boolean()) return ParamValue{*n.value<bool>()};
  if (n.is_integer()) return ParamValue{*n.value<std::int64_t>()};
  if (n.is_floating_point()) return ParamValue{*n.value<double>()};
  if (n.is_string()) return ParamValue{*n.value<std::string>()};
  return std::nullopt;
}

core::SearchSpace read_search_space(const toml::table& table, const std::string& source,
                                    core::SamplerKind sampler) {
  TableReader r(table, "search", source);
  // toml++ keeps keys sorted; the file's order is the order users expect to see.
  std::vector<std::pair<toml::source_position, std::string>> order;
  for (const auto& [key, value] : table)
    order.emplace_back(key.source().begin, std::string(key.str()));
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first.line != b.first.line ? a.first.line < b.first.line
                                        : a.first.column < b.first.column;
  });
  std::vector<core::Parameter> params;
  LookalikeNames names;
  std::vector<std::string> later;
  for (const auto& entry : order)
    later.push_back(entry.second);
  for (const auto& [position, name] : order) {
    later.erase(later.begin());
    const toml::node& value = *table.get(name);
    if (const auto problem = core::name_problem(name))
      fail(r, value, name, "the parameter name " + *problem);
    if (const auto twin = names.add(name))
      fail(r, value, name, lookalike_text("parameter", name, *twin));
    core::Domain domain = read_domain(r, value, name);
    if (const auto why = domain.problem())
      fail(r, value, name, std::string(core::domain_keyword(domain.kind)) + " " + *why);
    std::vector<core::Condition> when;
    if (const auto* t = value.as_table(); t && t->contains("when"))
      when = read_condition(r, table, *t->get("when"), name, params, later);
    params.push_back(core::Parameter{name, std::move(domain), std::move(when)});
  }
  if (params.empty())
    throw StudyFileError(source +
                         ": [search] declares no parameter; add one, e.g. "
                         "lr = { loguniform = [1e-4, 1e-1] }");
  core::SearchSpace space(std::move(params));
  if (core::is_model_based(sampler))
    for (const auto& p : space.parameters())
      if (p.domain.kind == DomainKind::Grid)
        fail(r, *table.get(p.name), p.name,
             "sampler \"" + std::string(core::sampler_keyword(sampler)) +
                 "\" chooses every value itself, but a grid axis enumerates its values in "
                 "turn; make it a choice");
  if (sampler == core::SamplerKind::Grid) {
    for (const auto& p : space.parameters())
      if (p.domain.is_sampled() && p.domain.kind != DomainKind::Choice)
        fail(r, *table.get(p.name), p.name,
             "sampler \"grid\" enumerates every configuration, but this parameter is " +
                 std::string(core::domain_keyword(p.domain.kind)) +
                 "; make it a grid or choice, or use sampler \"random\" or \"halton\"");
  }
  return space;
}

}  // namespace slurmtune::config
