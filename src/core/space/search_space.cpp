#include "core/space/search_space.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "core/error.hpp"
#include "core/number_text.hpp"

namespace slurmtune::core {
namespace {

// The first of two kinds with one keyword is the one the keyword names: a stepped float is
// `{ uniform = [low, high], step = q }`.
constexpr std::array<std::pair<DomainKind, std::string_view>, 11> kKeywords{{
    {DomainKind::Uniform, "uniform"},
    {DomainKind::SteppedUniform, "uniform"},
    {DomainKind::LogUniform, "loguniform"},
    {DomainKind::QUniform, "quniform"},
    {DomainKind::QLogUniform, "qloguniform"},
    {DomainKind::RandInt, "randint"},
    {DomainKind::QRandInt, "qrandint"},
    {DomainKind::LogRandInt, "lograndint"},
    {DomainKind::Choice, "choice"},
    {DomainKind::Grid, "grid"},
    {DomainKind::Constant, "constant"},
}};

// Rounds to the nearest multiple of q, ties to even, like numpy.round(v / q) * q.
double quantize(double value, double q) {
  return std::nearbyint(value / q) * q;
}

// How close (high - low) / step must come to a whole number: decimal steps such as 0.1
// are not exact in binary ((0.7 - 0.1) / 0.2 is 2.9999999999999996).
constexpr double kStepTolerance = 1e-9;

// Optuna's value of a step grid: k steps above low, clipped to the bounds (the last one
// may round past high).
double stepped_value(const Domain& d, double k) {
  return std::clamp(k * d.q + d.low, d.low, d.high);
}

double lerp_log(double low, double high, double u) {
  return std::exp(std::log(low) + u * (std::log(high) - std::log(low)));
}

double unit_of_number(const Domain& d, double v) {
  if (d.is_log()) return (std::log(v) - std::log(d.low)) / (std::log(d.high) - std::log(d.low));
  return (v - d.low) / (d.high - d.low);
}

}  // namespace

std::string_view domain_keyword(DomainKind kind) {
  for (const auto& [k, word] : kKeywords)
    if (k == kind) return word;
  return "?";
}

std::optional<DomainKind> domain_kind_from_keyword(std::string_view word) {
  for (const auto& [k, w] : kKeywords)
    if (w == word) return k;
  return std::nullopt;
}

bool Domain::is_integer() const {
  return kind == DomainKind::RandInt || kind == DomainKind::QRandInt ||
         kind == DomainKind::LogRandInt;
}

std::size_t Domain::steps() const {
  if (kind != DomainKind::SteppedUniform) return 0;
  return static_cast<std::size_t>(std::nearbyint((high - low) / q));
}

bool Domain::is_log() const {
  return kind == DomainKind::LogUniform || kind == DomainKind::QLogUniform ||
         kind == DomainKind::LogRandInt;
}

ParamValue Domain::from_unit(double u) const {
  switch (kind) {
    case DomainKind::Uniform:
      return low + u * (high - low);
    case DomainKind::LogUniform:
      return lerp_log(low, high, u);
    case DomainKind::QUniform:
      return quantize(low + u * (high - low), q);
    case DomainKind::QLogUniform:
      return quantize(lerp_log(low, high, u), q);
    case DomainKind::SteppedUniform: {
      const auto points = static_cast<double>(steps()) + 1.0;
      return stepped_value(*this, std::min(std::floor(u * points), points - 1.0));
    }
    case DomainKind::RandInt: {
      const double span = high - low;
      const auto offset = std::min(std::floor(u * span), span - 1.0);
      return static_cast<std::int64_t>(low + offset);
    }
    case DomainKind::QRandInt: {
      const double steps = std::floor((high - low) / q) + 1.0;
      const double k = std::min(std::floor(u * steps), steps - 1.0);
      return static_cast<std::int64_t>(low + k * q);
    }
    case DomainKind::LogRandInt: {
      const double v = std::floor(lerp_log(low, high, u));
      return static_cast<std::int64_t>(std::clamp(v, low, high - 1.0));
    }
    case DomainKind::Choice: {
      const auto n = static_cast<double>(values.size());
      const auto index = static_cast<std::size_t>(std::min(std::floor(u * n), n - 1.0));
      return values[index];
    }
    case DomainKind::Grid:
    case DomainKind::Constant:
      return values.front();
  }
  throw UsageError("unknown domain kind");
}

double Domain::to_unit(const ParamValue& value) const {
  switch (kind) {
    case DomainKind::Choice:
    case DomainKind::Grid: {
      const auto it = std::find(values.begin(), values.end(), value);
      const auto index = static_cast<double>(it - values.begin());
      return (index + 0.5) / static_cast<double>(values.size());
    }
    case DomainKind::Constant:
      return 0.5;
    case DomainKind::SteppedUniform: {  // the centre of the value's slot, as from_unit's
      const auto points = static_cast<double>(steps()) + 1.0;
      const double k = std::clamp(std::nearbyint((as_number(value) - low) / q), 0.0, points - 1.0);
      return (k + 0.5) / points;
    }
    default:
      return std::clamp(unit_of_number(*this, as_number(value)), 0.0, 1.0);
  }
}

ParamValue Domain::from_number(double x) const {
  switch (kind) {
    case DomainKind::Uniform:
    case DomainKind::LogUniform:
      return std::clamp(x, low, high);
    case DomainKind::QUniform:
    case DomainKind::QLogUniform: {
      // The nearest multiple of q inside the bounds (when one is): a model's value must
      // stay a value of the domain (a log density has no room for 0).
      double v = quantize(std::clamp(x, low, high), q);
      if (v < low && v + q <= high) v += q;
      if (v > high && v - q >= low) v -= q;
      return v;
    }
    case DomainKind::SteppedUniform:
      return stepped_value(
          *this, std::clamp(std::nearbyint((x - low) / q), 0.0, static_cast<double>(steps())));
    case DomainKind::RandInt:
    case DomainKind::LogRandInt:
      return static_cast<std::int64_t>(std::clamp(std::nearbyint(x), low, high - 1));
    case DomainKind::QRandInt: {
      const double k = std::clamp(std::nearbyint((x - low) / q), 0.0, std::floor((high - low) / q));
      return static_cast<std::int64_t>(low + k * q);
    }
    default:
      throw UsageError("from_number on a listed domain (" + std::string(domain_keyword(kind)) +
                       ")");
  }
}

std::size_t Domain::index_of(const ParamValue& value) const {
  const auto it = std::find(values.begin(), values.end(), value);
  if (it == values.end()) throw UsageError("value " + to_text(value) + " is not in the domain");
  return static_cast<std::size_t>(it - values.begin());
}

bool Domain::admits(const ParamValue& value) const {
  if (is_listed()) return std::find(values.begin(), values.end(), value) != values.end();
  if (!std::holds_alternative<std::int64_t>(value) && !std::holds_alternative<double>(value))
    return false;
  const double x = as_number(value);
  if (is_integer() && x != std::trunc(x)) return false;
  if (kind == DomainKind::SteppedUniform &&
      std::abs((x - low) / q - std::nearbyint((x - low) / q)) > kStepTolerance * (1.0 + steps()))
    return false;  // between two steps
  return x >= low && x <= high;
}

std::optional<ParamValue> Domain::accept(const ParamValue& given) const {
  const auto is_number = [](const ParamValue& v) {
    return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<double>(v);
  };
  if (is_listed()) {
    for (const auto& v : values)
      if (v == given) return v;
    for (const auto& v : values)
      if (is_number(given) && is_number(v) && as_number(v) == as_number(given)) return v;
    return std::nullopt;
  }
  if (!is_number(given)) return std::nullopt;
  const ParamValue v = is_integer() ? given : ParamValue{as_number(given)};
  if (is_integer() && !std::holds_alternative<std::int64_t>(v)) return std::nullopt;
  // randint's upper bound is not one of its values (admits() takes it for recorded tables).
  const bool excluded_high =
      (kind == DomainKind::RandInt || kind == DomainKind::LogRandInt) && as_number(v) >= high;
  return admits(v) && !excluded_high ? std::optional(v) : std::nullopt;
}

namespace {

std::optional<bool> bool_of(std::string_view text) {
  if (text == "true" || text == "True" || text == "1") return true;
  if (text == "false" || text == "False" || text == "0") return false;
  return std::nullopt;
}

}  // namespace

std::optional<ParamValue> Domain::parse(std::string_view text) const {
  if (is_listed()) {
    const auto number = parse_double(text);
    const auto flag = bool_of(text);
    for (const auto& v : values) {
      if (const auto* s = std::get_if<std::string>(&v); s && *s == text) return v;
      if (const auto* b = std::get_if<bool>(&v); b && flag && *b == *flag) return v;
      if ((std::holds_alternative<std::int64_t>(v) || std::holds_alternative<double>(v)) &&
          number && as_number(v) == *number)
        return v;
    }
    return std::nullopt;
  }
  const auto x = parse_double(text);
  if (!x || !std::isfinite(*x)) return std::nullopt;
  if (!is_integer()) return *x;
  if (*x != std::trunc(*x) || std::abs(*x) > 9.0e15) return std::nullopt;
  return static_cast<std::int64_t>(*x);
}

std::optional<std::string> Domain::problem() const {
  if (kind == DomainKind::Choice || kind == DomainKind::Grid) {
    if (values.empty()) return "is empty; list at least one value, e.g. [32, 64]";
    return std::nullopt;
  }
  if (kind == DomainKind::Constant) return std::nullopt;
  if (!std::isfinite(low) || !std::isfinite(high))
    return "has a non-finite bound; use finite numbers";
  if (!(low < high))
    return "has low (" + format_double(low) + ") >= high (" + format_double(high) +
           "); the lower bound comes first and must be smaller";
  if (is_log() && low <= 0.0)
    return "is on a log scale but its lower bound " + format_double(low) +
           " is not positive; use a bound > 0 or a linear domain";
  if (is_integer() && (low != std::trunc(low) || high != std::trunc(high)))
    return "needs integer bounds";
  const bool quantized = kind == DomainKind::QUniform || kind == DomainKind::QLogUniform ||
                         kind == DomainKind::QRandInt;
  if (quantized && !(q > 0.0 && std::isfinite(q)))
    return "needs a positive quantum q as its third element, e.g. [0, 1, 0.1]";
  if (kind == DomainKind::QRandInt && q != std::trunc(q)) return "needs an integer quantum q";
  if (kind == DomainKind::SteppedUniform) {
    if (!(q > 0.0 && std::isfinite(q))) return "needs a positive, finite step";
    const double n = (high - low) / q;
    if (std::abs(n - std::nearbyint(n)) > kStepTolerance * (1.0 + n)) {
      // Decimal steps print as the user wrote them, not as 0.6000000000000001.
      const auto near = [](double x) {
        char text[32];
        std::snprintf(text, sizeof text, "%.12g", x);
        return std::string(text);
      };
      const double below = low + std::floor(n) * q;
      return "has a step of " + near(q) + " that does not divide high - low (" + near(high - low) +
             "); its values start at low, so make high " + near(below) + " or " + near(below + q);
    }
    if (n > 1e9) return "has more than 10^9 steps; use a larger step or uniform";
  }
  if (kind == DomainKind::RandInt && high - low < 1.0) return "has no integer in [low, high)";
  return std::nullopt;
}

std::string Domain::describe() const {
  std::string text(domain_keyword(kind));
  if (is_listed()) {
    text += " [";
    for (std::size_t i = 0; i < values.size(); ++i)
      text += (i ? ", " : "") + core::to_json(values[i]);
    return text + "]";
  }
  text += " [" + format_double(low) + ", " + format_double(high);
  if (kind == DomainKind::SteppedUniform) return text + "] step " + format_double(q);
  if (q > 0.0) text += ", " + format_double(q);
  return text + "]";
}

SearchSpace::SearchSpace(std::vector<Parameter> parameters) : parameters_(std::move(parameters)) {
  for (const auto& p : parameters_)
    if (const auto why = p.domain.problem())
      throw InputError("search parameter '" + p.name + "' " + *why);
}

std::optional<std::size_t> SearchSpace::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    if (parameters_[i].name == name) return i;
  return std::nullopt;
}

std::size_t SearchSpace::sampled_dimensions() const {
  return static_cast<std::size_t>(std::count_if(
      parameters_.begin(), parameters_.end(), [](const auto& p) { return p.domain.is_sampled(); }));
}

std::uint64_t SearchSpace::grid_size() const {
  std::uint64_t size = 1;
  for (const auto& p : parameters_) {
    if (p.domain.kind != DomainKind::Grid) continue;
    const std::uint64_t n = p.domain.values.size();
    if (size > std::numeric_limits<std::uint64_t>::max() / n)
      return std::numeric_limits<std::uint64_t>::max();
    size *= n;
  }
  return size;
}

std::string SearchSpace::to_json(const Configuration& config) const {
  std::string text = "{";
  for (std::size_t i = 0; i < parameters_.size() && i < config.values.size(); ++i) {
    if (!config.is_active(i)) continue;
    text += (text.size() > 1 ? ", " : "") + json_quote(parameters_[i].name) + ": " +
            core::to_json(config.values[i]);
  }
  return text + "}";
}

bool SearchSpace::conditional() const {
  return std::any_of(parameters_.begin(), parameters_.end(),
                     [](const Parameter& p) { return !p.when.empty(); });
}

bool SearchSpace::is_active(std::size_t p, const std::vector<ParamValue>& values,
                            const std::vector<bool>& active) const {
  for (const auto& c : parameters_[p].when) {
    if (!active[c.parent]) return false;
    if (std::find(c.values.begin(), c.values.end(), values[c.parent]) == c.values.end())
      return false;
  }
  return true;
}

void SearchSpace::resolve_activity(Configuration& config) const {
  config.active.clear();
  if (!conditional()) return;
  config.active.assign(parameters_.size(), true);
  for (std::size_t p = 0; p < parameters_.size(); ++p) {
    config.active[p] = is_active(p, config.values, config.active);
    if (!config.active[p]) config.values[p] = placeholder(parameters_[p].domain);
  }
}

ParamValue placeholder(const Domain& d) {
  if (!d.values.empty()) return d.values.front();
  if (d.is_integer()) return static_cast<std::int64_t>(d.low);
  return d.low;
}

}  // namespace slurmtune::core
