#include "store/warm_start.hpp"

#include <filesystem>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "core/text.hpp"
#include "store/study_reader.hpp"

namespace slurmtune::store {
namespace {

namespace fs = std::filesystem;

// A refusal already worded in full (the study file, the key, the results file).
class WarmStartError : public InputError {
 public:
  using InputError::InputError;
};

std::optional<core::TrialEnd> end_of(TrialStatus status) {
  switch (status) {
    case TrialStatus::Completed:
      return core::TrialEnd::Completed;
    case TrialStatus::Stopped:
    case TrialStatus::Paused:  // never promoted: stopped where it waited
      return core::TrialEnd::Stopped;
    case TrialStatus::Failed:
      return core::TrialEnd::Failed;
    case TrialStatus::Pending:
    case TrialStatus::Running:
      break;
  }
  return std::nullopt;
}

// Where each of this study's parameters is in the earlier one (nullopt: it has none).
std::vector<std::optional<std::size_t>> parameter_map(const core::SearchSpace& now,
                                                      const core::SearchSpace& past) {
  std::vector<std::optional<std::size_t>> out;
  for (const auto& p : now.parameters())
    out.push_back(past.index_of(p.name));
  return out;
}

// One earlier trial in this study's space; nullopt when a value is not one of it.
std::optional<core::Configuration> translate(const core::SearchSpace& now,
                                             const std::vector<std::optional<std::size_t>>& map,
                                             const core::Configuration& past) {
  core::Configuration config;
  config.active.assign(now.size(), false);
  for (std::size_t p = 0; p < now.size(); ++p) {
    const core::Domain& d = now.parameters()[p].domain;
    config.values.push_back(core::placeholder(d));
    if (!map[p] || !past.is_active(*map[p])) continue;  // absent in that trial
    const auto value = d.accept(past.values[*map[p]]);
    if (!value) return std::nullopt;
    config.values[p] = *value;
    config.active[p] = true;
  }
  return config;
}

// What one list of earlier studies is: its key, where the study file names it (the study
// file alone when the spec was built without one), its files and where their trials go.
struct PastStudies {
  std::string key;
  std::string where;
  const std::vector<std::string>& files;
  std::vector<core::PastTrial>& trials;
};

WarmStartSource read_source(const std::string& path, const core::StudySpec& study,
                            const PastStudies& list) {
  const StudyReader reader(path);
  const core::StudySpec& past = reader.spec();
  const auto refuse = [&](const std::string& why) {
    throw WarmStartError(list.where + ": [sampler] " + list.key + ": " + path + " " + why);
  };
  if (past.metric != study.metric || past.mode != study.mode)
    refuse("optimizes " + core::visible(past.metric) + " (" +
           (past.mode == core::Mode::Max ? "max" : "min") + "), this study " +
           core::visible(study.metric) + " (" + (study.mode == core::Mode::Max ? "max" : "min") +
           "): its values say nothing about this objective");
  const auto map = parameter_map(study.space, past.space);
  WarmStartSource source{list.key, path, 0, 0, 0, {}};
  bool shared = false;
  for (std::size_t p = 0; p < study.space.size(); ++p) {
    if (map[p] && study.space.parameters()[p].domain.is_sampled()) shared = true;
    if (!map[p]) source.absent.push_back(study.space.parameters()[p].name);
  }
  if (!shared) refuse("has none of this study's sampled parameters");
  // Its judged reports, by trial, in the order they came.
  std::map<std::uint64_t, std::vector<core::PastTrial::Judged>> judged;
  for (const auto& e : reader.events())
    if ((e.kind == EventKind::Continue || e.kind == EventKind::Stop ||
         e.kind == EventKind::Pause) &&
        e.rung >= 0)
      judged[e.trial].push_back({e.step, e.value, e.milestone});
  for (const auto& t : reader.trials()) {
    const auto end = end_of(t.status);
    if (!end) {
      ++source.unfinished;
      continue;
    }
    auto config = translate(study.space, map, t.config);
    if (!config) {
      ++source.outside;
      continue;
    }
    core::PastTrial trial;
    trial.config = std::move(*config);
    trial.judged = judged[t.id];
    if (t.reports > 0) trial.last = std::pair{t.last_step, t.last_value};
    trial.end = *end;
    list.trials.push_back(std::move(trial));
    ++source.used;
  }
  if (source.used == 0)
    refuse("has no finished trial whose values this study's space has (" +
           std::to_string(source.outside) + " outside it, " + std::to_string(source.unfinished) +
           " unfinished)");
  return source;
}

}  // namespace

std::vector<WarmStartSource> load_warm_start(core::StudySpec& study) {
  std::vector<WarmStartSource> sources;
  auto& sampler = study.sampler;
  sampler.warm_start.clear();
  sampler.prior.clear();
  const fs::path folder = fs::path(study.path).parent_path();
  const auto where = [&](const std::string& key_where) {
    return key_where.empty() ? study.path : key_where;
  };
  const PastStudies lists[] = {
      {"warm_start", where(sampler.warm_start_where), sampler.warm_start_files, sampler.warm_start},
      {"prior", where(sampler.prior_where), sampler.prior_files, sampler.prior}};
  for (const auto& list : lists) {
    for (const auto& file : list.files) {
      const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : folder / file;
      try {
        sources.push_back(read_source(path.string(), study, list));
      } catch (const WarmStartError&) {
        throw;
      } catch (const std::exception& e) {  // not a results file, damaged, unreadable: the
        // reader's message starts with the path
        throw InputError(list.where + ": [sampler] " + list.key + ": " + e.what());
      }
    }
  }
  return sources;
}

}  // namespace slurmtune::store
