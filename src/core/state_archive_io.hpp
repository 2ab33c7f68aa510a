#pragma once
// What a .cpp file that saves and loads a class's state (state_archive.hpp) needs:
// cereal's archives and standard types, the state of the value types several classes
// hold, and SLURMTUNE_STATE, which defines save_state and load_state from one list of
// fields so the two cannot disagree.
#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/deque.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/queue.hpp>
#include <cereal/types/set.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>
#include <map>
#include <unordered_map>

#include "core/objectives/objectives.hpp"
#include "core/prediction/curve_extrapolator.hpp"
#include "core/random.hpp"
#include "core/schedulers/scheduler.hpp"
#include "core/search/suggester.hpp"
#include "core/space/search_space.hpp"
#include "core/state_archive.hpp"

namespace cereal {

// An unordered map is written in key order, so that equal states write equal bytes
// whatever order their maps were filled in (what the tests compare), and read back into
// a map of the same elements.
template <class Archive, class Key, class Value, class Hash, class Equal, class Allocator>
void save(Archive& archive, const std::unordered_map<Key, Value, Hash, Equal, Allocator>& map) {
  archive(std::map<Key, Value>(map.begin(), map.end()));
}
template <class Archive, class Key, class Value, class Hash, class Equal, class Allocator>
void load(Archive& archive, std::unordered_map<Key, Value, Hash, Equal, Allocator>& map) {
  std::map<Key, Value> ordered;
  archive(ordered);
  map.clear();
  map.reserve(ordered.size());
  for (auto& [key, value] : ordered)
    map.emplace(key, std::move(value));
}

}  // namespace cereal

/// Defines `Class::save_state(StateOut&) const` and `Class::load_state(StateIn&)` over the
/// same fields, in the same order.
#define SLURMTUNE_STATE(Class, ...)                                    \
  void Class::save_state(::slurmtune::core::StateOut& archive) const { \
    archive(__VA_ARGS__);                                              \
  }                                                                    \
  void Class::load_state(::slurmtune::core::StateIn& archive) {        \
    archive(__VA_ARGS__);                                              \
  }

namespace slurmtune::core {

template <class Archive>
void serialize(Archive& archive, ReportedPoint& point) {
  archive(point.step, point.value);
}
template <class Archive>
void serialize(Archive& archive, Configuration& config) {
  archive(config.values, config.active);
}
template <class Archive>
void serialize(Archive& archive, Exploit& exploit) {
  archive(exploit.step, exploit.donor, exploit.donor_step, exploit.config, exploit.operations);
}
template <class Archive>
void serialize(Archive& archive, PredictedFinal& p) {
  archive(p.at, p.mean, p.lower, p.upper);
}
template <class Archive>
void serialize(Archive& archive, ResumeReason& reason) {
  archive(reason.rule, reason.until, reason.expected, reason.improvement, reason.start_improvement);
}
template <class Archive>
void serialize(Archive& archive, Job& job) {
  archive(job.kind, job.trial, job.until, job.exploit, job.reason);
}
template <class Archive>
void serialize(Archive& archive, Suggestion& suggestion) {
  archive(suggestion.config, suggestion.info.origin, suggestion.info.position.model_words,
          suggestion.info.position.startup_words);
}
template <class Archive>
void save(Archive& archive, const ObjectiveTracker& tracker) {
  archive(tracker.objectives(), tracker.constraint_metrics());
}
template <class Archive>
void load(Archive& archive, ObjectiveTracker& tracker) {
  std::vector<double> objectives, constraint_metrics;
  archive(objectives, constraint_metrics);
  tracker = ObjectiveTracker(std::move(objectives), std::move(constraint_metrics));
}
template <class Archive>
void save(Archive& archive, const Xoshiro256& rng) {
  archive(rng.state());
}
template <class Archive>
void load(Archive& archive, Xoshiro256& rng) {
  std::array<std::uint64_t, 4> words{};
  archive(words);
  rng = Xoshiro256::from_state(words);
}

}  // namespace slurmtune::core
