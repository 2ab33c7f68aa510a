// Test driver for tests/python/peers/check_tpe.py: replays a scenario of asks, reports and
// tells (JSON lines on stdin) through slurmtune's core TPE sampler and prints every
// suggestion, so the script can compare them with the real Optuna's, value by value.
//   {"space":[{"kind":"float","low":1e-5,"high":1,"log":true}, ...], "seed":3,
//    "maximize":false, "constant_liar":false, "n_startup_trials":10, ...}   (first line)
//   {"op":"ask","trial":0}              -> prints [p0, p1, ...] (internal representation)
//   {"op":"report","trial":0,"step":3,"value":0.5}
//   {"op":"tell","trial":0,"state":"complete|pruned|fail","value":0.4}
#include <cstdio>
#include <iostream>
#include <string>

#include "core/error.hpp"
#include "core/search/optuna/tpe_sampler.hpp"
#include "protocol/wire/json_value.hpp"

using namespace slurmtune::core;
using slurmtune::protocol::JsonArray;
using slurmtune::protocol::JsonObject;
using slurmtune::protocol::JsonValue;
using slurmtune::protocol::parse_json;

namespace {

const JsonObject& object(const JsonValue& v) {
  return std::get<JsonObject>(v.data);
}
double number(const JsonObject& o, const char* key) {
  return std::get<double>(o.at(key).data);
}
bool flag(const JsonObject& o, const char* key, bool fallback) {
  const auto it = o.find(key);
  return it == o.end() ? fallback : std::get<bool>(it->value.data);
}

tpe::Distribution distribution(const JsonObject& o) {
  tpe::Distribution d;
  const auto& kind = std::get<std::string>(o.at("kind").data);
  if (kind == "categorical") {
    d.kind = tpe::Distribution::Kind::Categorical;
    d.choices = static_cast<std::size_t>(number(o, "choices"));
    return d;
  }
  d.kind = kind == "int" ? tpe::Distribution::Kind::Int : tpe::Distribution::Kind::Float;
  d.low = number(o, "low");
  d.high = number(o, "high");
  d.log = flag(o, "log", false);
  if (const auto it = o.find("step"); it != o.end() && it->value.is_number())
    d.step = std::get<double>(it->value.data);
  return d;
}

}  // namespace

int main() {
  std::string line;
  if (!std::getline(std::cin, line)) return 2;
  const JsonValue header_line = parse_json(line);
  const auto& header = object(header_line);
  std::vector<tpe::Distribution> space;
  for (const auto& d : std::get<JsonArray>(header.at("space").data))
    space.push_back(distribution(object(d)));
  tpe::TpeOptions options;
  options.constant_liar = flag(header, "constant_liar", false);
  options.estimator.multivariate = flag(header, "multivariate", false);
  options.estimator.consider_endpoints = flag(header, "consider_endpoints", false);
  options.estimator.consider_prior = flag(header, "consider_prior", true);
  options.estimator.consider_magic_clip = flag(header, "consider_magic_clip", true);
  if (header.contains("prior_weight"))
    options.estimator.prior_weight = number(header, "prior_weight");
  if (header.contains("n_startup_trials"))
    options.n_startup_trials = static_cast<std::size_t>(number(header, "n_startup_trials"));
  if (header.contains("n_ei_candidates"))
    options.n_ei_candidates = static_cast<std::size_t>(number(header, "n_ei_candidates"));
  tpe::TpeSampler sampler(space, options, static_cast<std::uint32_t>(number(header, "seed")),
                          flag(header, "maximize", false));
  std::vector<tpe::TrialRecord> history;
  while (std::getline(std::cin, line)) {
    const JsonValue event_line = parse_json(line);
    const auto& event = object(event_line);
    const auto& op = std::get<std::string>(event.at("op").data);
    const auto trial = static_cast<std::size_t>(number(event, "trial"));
    if (op == "ask") {
      history.push_back(tpe::TrialRecord{});
      const auto values = sampler.suggest(history);
      std::printf("[");
      for (std::size_t p = 0; p < values.size(); ++p)
        std::printf("%s%.17g", p ? ", " : "", values[p]);
      std::printf("]\n");
    } else if (op == "report") {
      auto& last = history.at(trial).last_intermediate;
      const double step = number(event, "step");
      if (!last || step >= last->first) last = std::make_pair(step, number(event, "value"));
    } else {
      const auto& state = std::get<std::string>(event.at("state").data);
      auto& t = history.at(trial);
      t.state = state == "complete" ? tpe::TrialRecord::State::Complete
                : state == "pruned" ? tpe::TrialRecord::State::Pruned
                                    : tpe::TrialRecord::State::Failed;
      if (state == "complete") t.value = number(event, "value");
    }
  }
  return 0;
}
