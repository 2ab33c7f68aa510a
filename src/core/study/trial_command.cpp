#include "core/study/trial_command.hpp"

#include "core/error.hpp"

namespace slurmtune::core {
namespace {

std::string placeholder_value(std::string_view name, const SearchSpace& space,
                              const Configuration& config, TrialId trial,
                              const std::string& trial_dir, const std::string& argument) {
  if (name == "trial_id") return std::to_string(trial);
  if (name == "trial_dir") return trial_dir;
  const auto index = space.index_of(name);
  if (!index || *index >= config.values.size())
    throw InputError("[trial] command: argument \"" + argument + "\": placeholder {" +
                     std::string(name) + "} names no parameter of [search]");
  return to_text(config.values[*index]);
}

// Whether a placeholder of `argument` (not a doubled, literal brace) names a parameter
// that does not exist in `config`.
bool names_inactive(const std::string& argument, const SearchSpace& space,
                    const Configuration& config) {
  for (std::size_t i = 0; i < argument.size(); ++i) {
    const char c = argument[i];
    if ((c == '{' || c == '}') && i + 1 < argument.size() && argument[i + 1] == c) {
      ++i;  // "{{" or "}}"
    } else if (c == '{') {
      const std::size_t close = argument.find('}', i);
      if (close == std::string::npos) return false;  // expand_argument says what is wrong
      const auto p = space.index_of(std::string_view(argument).substr(i + 1, close - i - 1));
      if (p && !config.is_active(*p)) return true;
      i = close;
    }
  }
  return false;
}

std::string expand_argument(const std::string& argument, const SearchSpace& space,
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
      out += placeholder_value(name, space, config, trial, trial_dir, argument);
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
    if (!names_inactive(argument, space, config))  // `--momentum={momentum}` without SGD
      argv.push_back(expand_argument(argument, space, config, trial, trial_dir));
  return argv;
}

}  // namespace slurmtune::core
