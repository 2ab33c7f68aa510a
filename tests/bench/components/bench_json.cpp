// JSON readers measured on slurmtune's own inputs (issue #27 §4: choose a maintained
// library by measurement). Each reader parses every line of FILE (JSON lines: replay
// events as Python's json module writes them, or control-plane payloads) and reads the
// fields a handler reads: a string "type", whole "trial", numbers "step" and "value"
// (NaN allowed: a diverged loss), or REPORT's "step" and its "metrics" object.
//   bench_json FILE [ROUNDS=5]
// Prints one line per reader: ns per line (best round), lines it could not read.
#include <rapidjson/document.h>
#include <simdjson.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/wire/json_value.hpp"

namespace {

// What a handler takes from one line: folded into a checksum so nothing is optimized out.
struct Fields {
  double sum = 0;
  std::size_t failed = 0;
  void add(double v) { sum += std::isnan(v) ? 1 : v; }
};

// The tree the control plane's decoders read (simdjson underneath).
void payload_tree(const std::string& line, Fields& out) {
  using namespace slurmtune::protocol;
  try {
    const JsonValue value = parse_json(line);
    const auto& o = std::get<JsonObject>(value.data);
    for (const auto& [name, v] : o) {
      if (v.is_number()) out.add(std::get<double>(v.data));
      if (v.is_string()) out.add(static_cast<double>(std::get<std::string>(v.data).size()));
      if (v.is_object())
        for (const auto& [metric, m] : std::get<JsonObject>(v.data))
          if (m.is_number()) out.add(std::get<double>(m.data));
    }
  } catch (const std::exception&) {
    ++out.failed;
  }
}

void rapid(const std::string& line, Fields& out) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseNanAndInfFlag>(line.data(), line.size());
  if (d.HasParseError() || !d.IsObject()) {
    ++out.failed;
    return;
  }
  for (const auto& member : d.GetObject()) {
    const auto& v = member.value;
    if (v.IsNumber()) out.add(v.GetDouble());
    if (v.IsString()) out.add(static_cast<double>(v.GetStringLength()));
    if (v.IsObject())
      for (const auto& m : v.GetObject())
        if (m.value.IsNumber()) out.add(m.value.GetDouble());
  }
}

void nlohmann_dom(const std::string& line, Fields& out) {
  try {
    const auto d = nlohmann::json::parse(line);
    for (const auto& [name, v] : d.items()) {
      if (v.is_number()) out.add(v.get<double>());
      if (v.is_string()) out.add(static_cast<double>(v.get_ref<const std::string&>().size()));
      if (v.is_object())
        for (const auto& [metric, m] : v.items())
          if (m.is_number()) out.add(m.get<double>());
    }
  } catch (const std::exception&) {
    ++out.failed;
  }
}

// simdjson's on-demand API reads the fields in one pass without building a tree.
struct SimdReader {
  simdjson::ondemand::parser parser;
  void operator()(const std::string& line, Fields& out) {
    simdjson::padded_string padded(line);
    simdjson::ondemand::document doc;
    if (parser.iterate(padded).get(doc)) {
      ++out.failed;
      return;
    }
    simdjson::ondemand::object object;
    if (doc.get_object().get(object)) {
      ++out.failed;
      return;
    }
    for (auto field : object) {
      simdjson::ondemand::value v;
      if (field.value().get(v)) {
        ++out.failed;
        return;
      }
      simdjson::ondemand::json_type type;
      if (v.type().get(type)) {
        // NaN, Infinity: not JSON, so simdjson has no type for them; its raw token says
        // which they are (Python's spelling), as slurmtune would read them.
        const std::string_view token = v.raw_json_token();
        if (token.starts_with("NaN")) {
          out.add(std::nan(""));
          continue;
        }
        if (token.starts_with("Infinity") || token.starts_with("-Infinity")) {
          out.add(token.front() == '-' ? -HUGE_VAL : HUGE_VAL);
          continue;
        }
        ++out.failed;
        return;
      }
      if (type == simdjson::ondemand::json_type::number) {
        double d = 0;
        if (v.get_double().get(d)) {
          ++out.failed;
          return;
        }
        out.add(d);
      } else if (type == simdjson::ondemand::json_type::string) {
        std::string_view s;
        if (v.get_string().get(s)) {
          ++out.failed;
          return;
        }
        out.add(static_cast<double>(s.size()));
      } else if (type == simdjson::ondemand::json_type::object) {
        simdjson::ondemand::object inner;
        if (v.get_object().get(inner)) {
          ++out.failed;
          return;
        }
        for (auto m : inner) {
          simdjson::ondemand::value mv;
          simdjson::ondemand::json_type mtype;
          if (m.value().get(mv) || mv.type().get(mtype)) {
            ++out.failed;
            return;
          }
          double d = 0;
          if (mtype != simdjson::ondemand::json_type::number) continue;
          if (mv.get_double().get(d)) {
            ++out.failed;
            return;
          }
          out.add(d);
        }
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_json FILE [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<std::string> lines;
  std::ifstream in(argv[1]);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  if (lines.empty()) {
    std::fprintf(stderr, "bench_json: %s has no lines\n", argv[1]);
    return 2;
  }
  SimdReader simd;
  const std::vector<std::pair<const char*, std::function<void(const std::string&, Fields&)>>>
      readers = {{"payload tree (protocol::parse_json)", payload_tree},
                 {"RapidJSON 1.1 (DOM, kParseNanAndInfFlag)", rapid},
                 {"simdjson 3.0 (on-demand, NaN from its raw token)", std::ref(simd)},
                 {"nlohmann/json 3.11 (DOM)", nlohmann_dom}};
  std::printf("%zu lines from %s\n", lines.size(), argv[1]);
  for (const auto& [name, read] : readers) {
    double best_ns = 1e300;
    Fields fields;
    for (int r = 0; r < rounds; ++r) {
      fields = Fields{};
      const auto start = std::chrono::steady_clock::now();
      for (const auto& line : lines)
        read(line, fields);
      const double ns =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
              .count();
      best_ns = std::min(best_ns, ns / static_cast<double>(lines.size()));
    }
    std::printf("%-44s %8.1f ns/line  unread %zu  (checksum %.6g)\n", name, best_ns, fields.failed,
                fields.sum);
  }
  return 0;
}
