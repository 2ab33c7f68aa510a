#include "core/search/gp/observation_choice.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace slurmtune::core::gp {
namespace {

// A total order for ranking: a NaN score (a diverged trial) as the worst.
double ranking_key(double score) {
  return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
}

double rank_fraction(std::size_t k, std::size_t members) {
  return static_cast<double>(k) / static_cast<double>(members);
}

struct RankedIndex {
  double rank;
  std::size_t index;
};

bool before(const RankedIndex& a, const RankedIndex& b) {
  return a.rank < b.rank || (a.rank == b.rank && a.index < b.index);
}

// The limit / 2 best of `ranked` by rank (ties: the earlier arrival), then the most recent
// others of the first `count`, up to `limit`; in arrival order. `ranked` holds at least
// limit / 2.
std::vector<std::size_t> best_half_and_recent(std::vector<RankedIndex> ranked, std::size_t count,
                                              std::size_t limit) {
  const std::size_t half = limit / 2;
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(half),
                    ranked.end(), before);
  std::vector<std::size_t> best_half;
  for (std::size_t k = 0; k < half; ++k)
    best_half.push_back(ranked[k].index);
  std::sort(best_half.begin(), best_half.end());
  std::vector<std::size_t> chosen = best_half;
  for (std::size_t i = count; i-- > 0 && chosen.size() < limit;)
    if (!std::binary_search(best_half.begin(), best_half.end(), i)) chosen.push_back(i);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace

std::vector<std::size_t> choose_observations(std::span<const RankedScore> all, std::size_t count,
                                             std::size_t limit) {
  std::vector<std::size_t> chosen(count);
  std::iota(chosen.begin(), chosen.end(), 0);
  if (count <= limit) return chosen;
  std::map<double, std::vector<std::size_t>> by_resource;
  for (std::size_t i = 0; i < count; ++i)
    by_resource[all[i].resource].push_back(i);
  std::vector<RankedIndex> ranked;
  ranked.reserve(count);
  for (auto& [resource, members] : by_resource) {
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return ranking_key(all[a].score) > ranking_key(all[b].score);
    });
    for (std::size_t k = 0; k < members.size(); ++k)
      ranked.push_back({rank_fraction(k, members.size()), members[k]});
  }
  return best_half_and_recent(std::move(ranked), count, limit);
}

void ObservationChoice::add(RankedScore observation) {
  AtResource& at = resources_[observation.resource];
  ++at.members;
  const Ranked r{ranking_key(observation.score), count_++};
  // After every equal key: they arrived earlier.
  const auto place =
      std::upper_bound(at.best.begin(), at.best.end(), r,
                       [](const Ranked& a, const Ranked& b) { return a.key > b.key; });
  if (static_cast<std::size_t>(place - at.best.begin()) >= limit_ / 2) return;
  at.best.insert(place, r);
  if (at.best.size() > limit_ / 2) at.best.pop_back();
}

std::vector<std::size_t> ObservationChoice::chosen() const {
  if (count_ <= limit_) {
    std::vector<std::size_t> all(count_);
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  std::vector<RankedIndex> ranked;
  for (const auto& [resource, at] : resources_)
    for (std::size_t k = 0; k < at.best.size(); ++k)
      ranked.push_back({rank_fraction(k, at.members), at.best[k].index});
  // Each resource keeps limit / 2, so there are at least that many to choose from.
  return best_half_and_recent(std::move(ranked), count_, limit_);
}

}  // namespace slurmtune::core::gp
