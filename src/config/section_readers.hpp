#pragma once
// Readers of the study file's larger tables, one file each.
#include <toml++/toml.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "config/table_reader.hpp"
#include "core/schedulers/scheduler_spec.hpp"
#include "core/search/sampler_spec.hpp"
#include "core/space/search_space.hpp"
#include "core/study/study_spec.hpp"

namespace slurmtune::config {

/// `[search]`: parameters in the order the file declares them.
core::SearchSpace read_search_space(const toml::table& table, const std::string& source,
                                    core::SamplerKind sampler);

/// `[sampler]` (`present`: the table, when the file has one): the options of the chosen
/// model-based sampler, with defaults.
void read_sampler(TableReader reader, const toml::node* present, core::SamplerSpec& spec);
/// MOBSTER's keys that set the Gaussian process's kernel fit: refused with surrogate =
/// "random-forest", and left out of its resolved study.
inline constexpr std::array<std::string_view, 4> kKernelKeys{
    "length_scale_prior", "input_warping", "exchangeable_choices", "max_fit_observations"};

/// A TOML scalar (boolean, integer, float, string) as a parameter value; nullopt otherwise.
std::optional<core::ParamValue> scalar(const toml::node& node);

/// `[[enqueue]]` (`node`: the top-level key, when the file has one): configurations to
/// try first, checked against the study's space, sampler and max_trials.
std::vector<core::PartialConfiguration> read_enqueue(const toml::node* node,
                                                     const core::StudySpec& study);

/// "; did you mean 'NAME'?" for the parameter of `params` closest to `word`, or "".
std::string parameter_hint(std::string_view word, const std::vector<core::Parameter>& params);

/// `[scheduler]`: the keys valid for the chosen type and semantics, with defaults.
/// PBT's mutations name parameters of `space`.
void read_scheduler(TableReader reader, const core::SearchSpace& space, core::SchedulerSpec& spec);

/// asha_promotion's trust keys where the file does not give them. With a MOBSTER prior
/// (issue #64, adopted on the tuning pairs, search-quality.md): the earlier best started as
/// they were (`prior_exact`; the sampler resolves it for the trials run at once, and
/// core::resolve_prior_start the trust with it) train to max_t; their trust is checked
/// (`trust_check`, since 2026-12-04), a low rank waived while the earlier studies ranked it
/// about as low at the same resource (the "lesson" waiver from rung 0, since C20, 2026-12-05;
/// C18's gain from rung 1 before). Without a prior, none of it.
struct TrustDefaults {
  std::int64_t trusted_trials = 0;
  bool trust_check = false;
  core::TrustWaiver trust_check_waiver = core::TrustWaiver::None;
  std::int64_t trust_check_waiver_from_rung = 0;  ///< 1 with a prior's gain or overtake
};
TrustDefaults trust_defaults(const core::StudySpec& study);

/// `[scheduler]` keys of type = "pbt", and its `[scheduler.mutations]` table.
void read_pbt(TableReader& reader, const core::SearchSpace& space, core::PbtSpec& spec);

/// `[checkpoints]`: which checkpoints slurmtune removes, and where they go. Read after
/// [study] (several objectives have no one best for keep_ended).
void read_checkpoints(TableReader reader, core::StudySpec& study);

/// `[checkpoints] node_local = true` needs what only node agents give: one-rank trials on
/// `launch = "worker"`, and no PBT (whose clones cross nodes). Names the key otherwise.
void check_node_local_checkpoints(const toml::table& root, const core::StudySpec& study,
                                  const std::string& source);

}  // namespace slurmtune::config
