#pragma once
// What a .cpp file that saves and loads a class's state (state_archive.hpp) needs:
// cereal's archives and standard types (value types write themselves: their
// `serialize` members), and SLURMTUNE_STATE, which defines save_state and load_state
// from one list of fields so the two cannot disagree.
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
