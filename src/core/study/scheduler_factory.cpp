#include "core/study/scheduler_factory.hpp"

#include "core/error.hpp"
#include "core/schedulers/early_stopping/asha_promotion_scheduler.hpp"
#include "core/schedulers/early_stopping/asha_scheduler.hpp"
#include "core/schedulers/early_stopping/hyperband_scheduler.hpp"
#include "core/schedulers/early_stopping/median_stopping_scheduler.hpp"
#include "core/schedulers/early_stopping/moasha_scheduler.hpp"
#include "core/schedulers/early_stopping/optuna_pruners.hpp"
#include "core/schedulers/freeze_thaw/freeze_thaw_scheduler.hpp"
#include "core/schedulers/pbt/pbt_scheduler.hpp"

namespace slurmtune::core {

std::unique_ptr<Scheduler> make_scheduler(const SchedulerSpec& spec, Mode mode, std::uint64_t seed,
                                          const std::string& study_name) {
  const bool optuna = spec.semantics == Semantics::Optuna;
  switch (spec.type) {
    case SchedulerType::Fifo:
      return std::make_unique<FifoScheduler>(spec.max_t, mode);
    case SchedulerType::Asha:
      if (spec.objectives.size() > 1) return std::make_unique<MoashaScheduler>(spec);
      if (optuna) return std::make_unique<OptunaSuccessiveHalvingScheduler>(spec, mode);
      return std::make_unique<AshaScheduler>(spec, mode, seed);
    case SchedulerType::AshaPromotion:
      return std::make_unique<AshaPromotionScheduler>(spec, mode);
    case SchedulerType::Hyperband:
      if (optuna) return std::make_unique<OptunaHyperbandScheduler>(spec, mode, study_name);
      return std::make_unique<HyperbandScheduler>(spec, mode);
    case SchedulerType::Median:
      return std::make_unique<MedianStoppingScheduler>(spec, mode);
    case SchedulerType::Pbt:
      return std::make_unique<PbtScheduler>(spec, mode, seed);
    case SchedulerType::FreezeThaw:
      return std::make_unique<FreezeThawScheduler>(spec, mode, seed);
  }
  throw UsageError("make_scheduler: unknown scheduler type");
}

}  // namespace slurmtune::core
