#include "core/study/trial_command.hpp"

#include <optional>

#include "core/error.hpp"

namespace slurmtune::core {
namespace {

// The text of placeholder `name`; nullopt for a parameter the configuration does not
// have (a conditional one whose `when` does not hold).
std::optional<std::string> placeholder_value(std::string_view name, const SearchSpace& space,
                                             const Configuration& config, TrialId trial,
                                             const std::string& trial_dir,
                                             const std::string& argument) {
  if (name == "trial_id") return std::to_string(trial);
  if (name == "trial_dir") return trial_dir;
  const auto index = space.index_of(name);
  if (!index || *index >= config.values.size())
    throw InputError("[trial] command: argument \"" + argument + "\": placeholder {" +
                     std::string(name) + "} names no parameter of [search]");
  if (!config.is_active(*index)) return std::nullopt;
  return to_text(config.values[*index]);
}

// The argument with its placeholders replaced; nullopt when one names an absent parameter.
std::optional<std::string> expand_argument(const std::string& argument, const SearchSpace& space,
                                           const Configuration& config, TrialId trial,
                                           const std::string& trial_dir) {
  std::string out;
  out.reserve(argument.size());
  for (std::size_t i = 0; i < argument.size(); ++i) {
    const char c = argument[i];
    const bool doubled = i + 1 < argument.size() && argument[i + 1] == c;
    if ((c == '{' || c == '}') && doubled) {
      out += c;
      ++i;
    } else if (c == '{') {
      const std::size_t close = argument.find('}', i);
      if (close == std::string::npos)
        throw InputError("[trial] command: argument \"" + argument + "\" has an unclosed '{'");
      const std::string_view name(argument.data() + i + 1, close - i - 1);
      const auto value = placeholder_value(name, space, config, trial, trial_dir, argument);
      if (!value) return std::nullopt;
      out += *value;
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_command(const std::vector<std::string>& command,
                                        const SearchSpace& space, const Configuration& config,
                                        TrialId trial, const std::string& trial_dir) {
  std::vector<std::string> argv;
  argv.reserve(command.size());
  for (const auto& argument : command)
    if (auto expanded = expand_argument(argument, space, config, trial, trial_dir))
      argv.push_back(std::move(*expanded));  // none: `--momentum={momentum}` without SGD
  return argv;
}

}  // namespace slurmtune::core
