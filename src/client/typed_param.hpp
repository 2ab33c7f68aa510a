#pragma once
// A trial parameter by name and type, from the JSON object the coordinator sent; shared
// by the report client and the MPI trial API so both say the same thing when a name is
// missing or a type is wrong.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "protocol/wire/json_value.hpp"

namespace slurmtune {

template <class T, class Error>
T typed_param(const protocol::JsonObject& params, const std::string& name) {
  const auto it = params.find(name);
  if (it == params.end()) throw Error("trial has no parameter '" + name + "'");
  const protocol::JsonValue& v = it->value;
  const auto wrong = [&](const char* wanted) {
    return Error("parameter '" + name + "' is a " + std::string(v.type_name()) + ", not " + wanted);
  };
  if constexpr (std::is_same_v<T, double>) {
    if (!v.is_number()) throw wrong("a number");
    return std::get<double>(v.data);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (!v.is_number()) throw wrong("an integer");
    const double d = std::get<double>(v.data);
    if (d != std::trunc(d)) throw wrong("an integer");
    return static_cast<std::int64_t>(d);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!std::holds_alternative<bool>(v.data)) throw wrong("a bool");
    return std::get<bool>(v.data);
  } else {
    static_assert(std::is_same_v<T, std::string>, "param<T>: T is double, int64_t, bool or string");
    if (!v.is_string()) throw wrong("a string");
    return std::get<std::string>(v.data);
  }
}

}  // namespace slurmtune
