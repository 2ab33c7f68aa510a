#include "core/study/decision_state.hpp"

#include <sstream>

#include "core/error.hpp"
#include "core/state_archive_io.hpp"

namespace slurmtune::core {

std::string save_decision_state(const Scheduler& scheduler, const Suggester& suggester) {
  std::ostringstream bytes;
  {
    StateOut archive(bytes);
    scheduler.save_state(archive);
    suggester.save_state(archive);
  }
  return std::move(bytes).str();
}

void load_decision_state(std::string_view bytes, Scheduler& scheduler, Suggester& suggester) {
  std::istringstream stream{std::string(bytes)};
  try {
    StateIn archive(stream);
    scheduler.load_state(archive);
    suggester.load_state(archive);
  } catch (const cereal::Exception& e) {
    throw InputError("the decision state (" + std::to_string(bytes.size()) +
                     " bytes) ends before the study's scheduler and sampler are read: " + e.what());
  }
  const auto read = static_cast<std::size_t>(stream.tellg());
  if (read != bytes.size())
    throw InputError("the decision state has " + std::to_string(bytes.size() - read) +
                     " bytes left after the study's scheduler and sampler are read (" +
                     std::to_string(bytes.size()) + " in all)");
}

}  // namespace slurmtune::core
