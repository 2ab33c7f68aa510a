// libFuzzer target: the long-form CSV reader of `slurmtune simulate --curves`, and a
// simulation over whatever table it accepts (Ray ASHA or ASHA's promotion variant, the
// first byte picks one, with allocations that kill and re-run recorded steps). Bad
// input must throw InputError naming the line; nothing else may escape, and every
// accepted table must simulate to the end.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "config/study_file.hpp"
#include "core/error.hpp"
#include "core/simulation/curve_csv.hpp"
#include "core/simulation/simulation.hpp"

namespace {
const char* const kSchedulers[] = {
    "type = \"asha\"\ngrace_period = 1\nmax_t = 9\nreduction_factor = 3\n",
    "type = \"asha_promotion\"\ngrace_period = 1\nmax_t = 9\nreduction_factor = 3\n",
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string study =
      std::string("[study]\nname = \"fuzz\"\nmetric = \"loss\"\nmetrics = [\"loss\", \"acc\"]\n") +
      "max_trials = 50\n[search]\nlr = { loguniform = [1e-4, 1] }\n"
      "opt = { choice = [\"sgd\", \"adam\", 4] }\n[scheduler]\n" +
      kSchedulers[data[0] % std::size(kSchedulers)];
  const auto spec = slurmtune::config::parse_study(study, "fuzz.toml");
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  try {
    const auto table = slurmtune::core::read_curve_csv(in, "fuzz.csv", spec);
    slurmtune::core::SimulationOptions options;
    options.workers = 2;
    options.curves = &table;
    if (data[0] & 2) {
      options.allocation_s = 20;
      options.end_margin_s = 5;
    }
    slurmtune::core::simulate_study(spec, options, nullptr);
  } catch (const slurmtune::InputError&) {
  }
  return 0;
}
