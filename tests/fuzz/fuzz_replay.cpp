// libFuzzer target: the JSON-lines event reader of `slurmtune replay`, driving real
// schedulers (Ray ASHA, Optuna Hyperband, median stopping, ASHA with promotions,
// freeze_thaw; the first byte picks one) and a real sampler (random, tpe or bohb, the
// first byte again; mobster under freeze_thaw, whose model it asks), which reads each
// start's "config" and "time". Bad lines must throw InputError naming the line; nothing
// else may escape.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "config/study_file.hpp"
#include "core/error.hpp"
#include "core/replay/replay.hpp"
#include "core/schedulers/scheduler_spec.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/suggester_factory.hpp"

namespace {
const char* const kSchedulers[] = {
    "type = \"asha\"\ngrace_period = 1\nmax_t = 27\nreduction_factor = 3\nbrackets = 2\n",
    "type = \"hyperband\"\nsemantics = \"optuna\"\nmin_resource = 1\nmax_resource = 27\n",
    "type = \"median\"\ngrace_period = 2\nmin_samples_required = 2\n",
    "type = \"asha_promotion\"\ngrace_period = 1\nmax_t = 9\nreduction_factor = 3\n",
    "type = \"freeze_thaw\"\nmax_t = 9\nreduction_factor = 3\ncost = \"seconds\"\n",
};
constexpr std::size_t kFreezeThaw = 4;
const char* const kSamplers[] = {"random", "tpe", "bohb"};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool freeze_thaw = data[0] % std::size(kSchedulers) == kFreezeThaw;
  const std::string study =
      std::string("[study]\nname = \"fuzz\"\nmetric = \"loss\"\nsampler = \"") +
      (freeze_thaw ? "mobster"
                   : kSamplers[(data[0] / std::size(kSchedulers)) % std::size(kSamplers)]) +
      "\"\n[search]\nx = { uniform = [0, 1] }\nopt = { choice = [\"a\", 2, true] }\n"
      "n = { qrandint = [0, 20, 4] }\n[scheduler]\n" +
      kSchedulers[data[0] % std::size(kSchedulers)];
  const auto spec = slurmtune::config::parse_study(study, "fuzz.toml");
  auto scheduler = slurmtune::core::make_scheduler(spec.scheduler, spec.mode, 1, spec.name);
  const auto suggester = slurmtune::core::make_suggester(spec.space, spec.sampler, false, 1);
  slurmtune::core::connect_model(*scheduler, *suggester);
  slurmtune::core::ReplaySampler sampler{
      *suggester, spec.space,   slurmtune::core::is_model_based(spec.sampler.kind),
      0,          spec.metrics, {}};
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  std::ostringstream out;
  try {
    slurmtune::core::replay_events(*scheduler, in, out, "fuzz.jsonl", &sampler);
  } catch (const slurmtune::InputError&) {
  }
  return 0;
}
