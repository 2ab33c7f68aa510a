// libFuzzer target: the study file (TOML) reader. Any input must parse or throw
// slurmtune's InputError family; a crash, a sanitizer report or another exception is a
// finding. A parsed study must survive its own resolved form (to_toml -> parse).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/study_file.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto study = slurmtune::config::parse_study(text, "fuzz.toml");
    const std::string resolved = slurmtune::config::to_toml(study);
    slurmtune::config::parse_study(resolved, "resolved.toml");
  } catch (const slurmtune::InputError&) {
  }
  return 0;
}
