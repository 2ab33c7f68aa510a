#include <algorithm>
#include <cmath>

#include "config/section_readers.hpp"
#include "config/study_file.hpp"
#include "core/number_text.hpp"
#include "core/schedulers/rung_ladder.hpp"
#include "core/text.hpp"

namespace slurmtune::config {
namespace {

using core::SchedulerType;
using core::Semantics;

constexpr std::size_t kMaxRungs = 64;  // rung membership is a 64-bit mask per trial

void read_reduction_factor(TableReader& r, core::SchedulerSpec& s, bool integer) {
  if (const auto v = r.number("reduction_factor")) {
    if (!(*v > 1) || !std::isfinite(*v))
      r.fail("reduction_factor", "must be greater than 1 (2, 3 and 4 are usual)");
    if (integer && *v != std::floor(*v))
      r.fail("reduction_factor", "must be an integer with semantics = \"optuna\"");
    s.reduction_factor = *v;
  }
}

void read_milestones(TableReader& r, core::SchedulerSpec& s) {
  const auto marks = r.numbers("milestones");
  if (!marks) return;
  if (marks->empty()) r.fail("milestones", "must list at least one rung, e.g. [1, 3, 9]");
  if (marks->size() > kMaxRungs) r.fail("milestones", "supports at most 64 rungs");
  for (std::size_t i = 0; i < marks->size(); ++i) {
    if (!((*marks)[i] > 0)) r.fail("milestones", "must be positive");
    if (i > 0 && !((*marks)[i] > (*marks)[i - 1])) r.fail("milestones", "must be increasing");
  }
  s.milestones = *marks;
}

void read_optional_int(TableReader& r, std::string_view key, std::int64_t& into,
                       std::int64_t least) {
  if (const auto v = r.integer(key)) {
    if (*v < least) r.fail(key, "must be at least " + std::to_string(least));
    into = *v;
  }
}

// Optuna's min_resource / max_resource: a positive integer or "auto".
std::optional<std::int64_t> read_resource(TableReader& r, std::string_view key,
                                          std::optional<std::int64_t> fallback) {
  const toml::node* n = r.node(key);
  if (!n) return fallback;
  if (n->is_string() && *n->value<std::string>() == "auto") return std::nullopt;
  if (!n->is_integer() || *n->value<std::int64_t>() < 1)
    r.fail(key, "must be a positive integer or \"auto\"");
  return n->value<std::int64_t>();
}

// trust_check_waiver_from_rung: its upper bound needs the rungs, so check_waiver_from_rung
// comes once they are read; that it goes with a waiver, once a prior's defaults are known
// (study_file.cpp).
void read_waiver_from_rung(TableReader& r, core::SchedulerSpec& s) {
  s.trust_check_waiver_from_rung_named = r.has("trust_check_waiver_from_rung");
  read_optional_int(r, "trust_check_waiver_from_rung", s.trust_check_waiver_from_rung, 0);
}

// The top rung (max_t) ends a trial, so a waiver is weighed only at the rungs below it.
void check_waiver_from_rung(TableReader& r, const core::SchedulerSpec& s) {
  const auto below_top = static_cast<std::int64_t>(core::promotion_milestones(s).size()) - 1;
  const std::int64_t from = s.trust_check_waiver_from_rung;
  if (from == 0 || from < below_top) return;
  // Appended piece by piece: g++ 12 warns falsely (-Wrestrict) on "(" + std::to_string(...).
  std::string why = "(";
  why += std::to_string(from);
  why += ") leaves no rung where the waiver is weighed: ";
  if (below_top > 0)
    why += "the rungs below max_t are 0 to " + std::to_string(below_top - 1);
  else
    why += "max_t is the only rung";
  r.fail("trust_check_waiver_from_rung", why);
}

void read_ray_family(TableReader& r, core::SchedulerSpec& s) {
  read_positive(r, "grace_period", s.grace_period);
  read_reduction_factor(r, s, false);
  const bool promotes =
      s.type == SchedulerType::AshaPromotion || s.type == SchedulerType::FreezeThaw;
  if (s.type == SchedulerType::Asha || promotes) read_milestones(r, s);
  if (s.type == SchedulerType::Asha) {
    if (const auto b = r.integer("brackets")) {
      if (*b < 1) r.fail("brackets", "must be at least 1");
      s.brackets = static_cast<int>(*b);
    }
    if (const auto stop = r.boolean("stop_last_trials")) s.stop_last_trials = *stop;
  }
  if (s.type == SchedulerType::AshaPromotion) {
    if (const auto predict = r.boolean("predict")) s.predict = *predict;
    if (const auto eager = r.boolean("eager_promotion")) s.eager_promotion = *eager;
    if (r.has("trusted_trials")) {
      std::int64_t trusted = 0;
      read_optional_int(r, "trusted_trials", trusted, 0);
      s.trusted_trials = trusted;
      s.trusted_trials_named = true;
    }
    s.trust_check_named = r.has("trust_check");
    if (const auto check = r.boolean("trust_check")) s.trust_check = *check;
    if (const auto above = r.number("trust_check_above")) {
      if (!(*above > 0 && *above < 1))
        r.fail("trust_check_above",
               "must be above 0 and below 1 (the share of a rung's other results that must "
               "rank above a trusted trial to end its trust; 0.5 by default)");
      s.trust_check_above = *above;
    }
    s.trust_check_waiver_named = r.has("trust_check_waiver");
    if (const auto waiver = r.keyword("trust_check_waiver", core::trust_waiver_keywords()))
      s.trust_check_waiver = *core::trust_waiver_from_keyword(*waiver);
    read_waiver_from_rung(r, s);
  }
  if (s.type == SchedulerType::FreezeThaw) {
    if (const auto mix = r.number("promotion_mix")) {
      if (!(*mix >= 0 && *mix <= 1))
        r.fail("promotion_mix",
               "must be from 0 to 1 (the share of jobs asha_promotion's rule "
               "chooses; 0.25 by default)");
      s.promotion_mix = *mix;
    }
    if (const auto cost = r.keyword("cost", core::job_cost_keywords()))
      s.job_cost = *core::job_cost_from_keyword(*cost);
  }
  if (s.grace_period > s.max_t)
    r.fail("grace_period", "(" + core::format_double(s.grace_period) + ") exceeds max_t (" +
                               core::format_double(s.max_t) + "); lower it or raise max_t");
  if (promotes && !s.milestones.empty() && s.milestones.back() > s.max_t)
    r.fail("milestones", "(" + core::format_double(s.milestones.back()) + ") lie past max_t (" +
                             core::format_double(s.max_t) + "); " +
                             std::string(core::scheduler_keyword(s.type)) +
                             "'s top rung is max_t: drop the rungs past it or raise max_t");
  if (!s.milestones.empty()) {
    if (s.brackets != 1) r.fail("brackets", "must be 1 when milestones are given");
    return;
  }
  // Counted before any is built: a factor just above 1 makes billions of them.
  const double count =
      std::floor(std::log(s.max_t / s.grace_period) / std::log(s.reduction_factor)) + 1;
  const double top = promotes ? 1 : 0;  // max_t, their top rung, may come on top
  if (!(count + top <= static_cast<double>(kMaxRungs)))
    r.fail("reduction_factor", "(" + core::format_double(s.reduction_factor) +
                                   ") makes more than 64 rungs between grace_period and max_t; "
                                   "raise it (2 to 4 is usual)");
  const auto rungs = core::geometric_milestones(s.grace_period, s.reduction_factor, s.max_t);
  if (s.brackets > static_cast<int>(rungs.size()))
    r.fail("brackets", "(" + std::to_string(s.brackets) + ") exceeds the number of rungs (" +
                           std::to_string(rungs.size()) + "); every bracket needs a rung");
}

}  // namespace

TrustDefaults trust_defaults(const core::StudySpec& study) {
  if (study.scheduler.type != SchedulerType::AshaPromotion || !core::has_prior(study.sampler))
    return {};
  // Every earlier best started as it was is trained to max_t, a low rank at any rung waived
  // while the earlier studies ranked it about as low there (C20; C18 before it: the first
  // rung by its rank alone, the gain above it; before that, 2 of them by the rank alone).
  // A waiver that reads the next rung is weighed from rung 1, as C18 adopted it.
  const auto& s = study.scheduler;
  const auto waiver = s.trust_check_waiver_named ? s.trust_check_waiver : core::TrustWaiver::Lesson;
  const bool reads_next_rung =
      waiver == core::TrustWaiver::Gain || waiver == core::TrustWaiver::Overtake;
  return {static_cast<std::int64_t>(study.sampler.mobster.prior_exact), true, waiver,
          reads_next_rung ? 1 : 0};
}

void read_scheduler(TableReader r, const core::SearchSpace& space, core::SchedulerSpec& s) {
  const auto type = r.keyword("type", core::scheduler_keywords());
  s.type = type ? *core::scheduler_type_from_keyword(*type) : SchedulerType::Fifo;
  const bool has_semantics = s.type == SchedulerType::Asha || s.type == SchedulerType::Hyperband;
  if (has_semantics) {
    if (const auto sem = r.keyword("semantics", {"ray", "optuna"}))
      s.semantics = *sem == "optuna" ? Semantics::Optuna : Semantics::Ray;
  }
  if (const auto res = r.string("resource")) {
    if (const auto problem = core::name_problem(*res)) r.fail("resource", *problem);
    s.resource = *res;
  }
  read_positive(r, "max_t", s.max_t);
  // Steps are doubles: past 2^53 two steps can be the same number.
  if (s.max_t > 9007199254740992.0)
    r.fail("max_t", "(" + core::format_double(s.max_t) +
                        ") exceeds 2^53, where steps stop being exact; use a coarser resource");
  s.reduction_factor = s.type == SchedulerType::Hyperband ? 3 : 4;
  if (s.semantics == Semantics::Optuna) {
    read_reduction_factor(r, s, true);
    s.min_resource = read_resource(
        r, "min_resource",
        s.type == SchedulerType::Hyperband ? std::optional<std::int64_t>{1} : std::nullopt);
    if (s.type == SchedulerType::Hyperband) {
      s.max_resource = read_resource(r, "max_resource", std::nullopt);
      if (!s.min_resource) r.fail("min_resource", "must be an integer for hyperband");
      if (s.max_resource && *s.max_resource < *s.min_resource)
        r.fail("max_resource", "must be >= min_resource");
    } else {
      read_optional_int(r, "min_early_stopping_rate", s.min_early_stopping_rate, 0);
    }
    read_optional_int(r, "bootstrap_count", s.bootstrap_count, 0);
    // Optuna refuses this combination too: with "auto" no trial could ever be promoted
    // before the resource is known, so the bootstrap would prune everything.
    const bool automatic = s.type == SchedulerType::Hyperband ? !s.max_resource : !s.min_resource;
    if (s.bootstrap_count > 0 && automatic)
      r.fail("bootstrap_count",
             std::string("cannot be used with ") +
                 (s.type == SchedulerType::Hyperband ? "max_resource" : "min_resource") +
                 " = \"auto\"; give the resource as an integer or set bootstrap_count = 0");
  } else if (s.type == SchedulerType::Pbt) {
    read_pbt(r, space, s.pbt);
  } else if (s.type == SchedulerType::Median) {
    read_positive(r, "grace_period", s.grace_period);
    read_optional_int(r, "min_samples_required", s.min_samples_required, 1);
  } else if (s.type != SchedulerType::Fifo) {
    read_ray_family(r, s);
    if (s.type == SchedulerType::AshaPromotion) check_waiver_from_rung(r, s);
  }
  r.finish();
}

}  // namespace slurmtune::config
