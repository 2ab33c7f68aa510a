#include "core/search/optuna/tpe_history.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace slurmtune::core::tpe {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kFixedScale = 4294967296.0;  // 2^32: a value's steps across its range
// Optuna's ramp leaves the newest 25 observations at weight 1; over trial numbers the
// ramp ends 26 trials back, where its linspace would.
constexpr std::size_t kFlatTail = 26;

bool is_finished(const TrialRecord& t) {
  return t.state == TrialRecord::State::Complete || t.state == TrialRecord::State::Pruned;
}

bool contains(const std::vector<std::size_t>& sorted, std::size_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

}  // namespace

std::optional<Rank> rank_of(const TrialRecord& t, double sign, bool constant_liar) {
  switch (t.state) {
    case TrialRecord::State::Failed:
      return std::nullopt;
    case TrialRecord::State::Running:
      if (!constant_liar) return std::nullopt;
      return Rank{kInf, kInf};
    case TrialRecord::State::Complete:
      return Rank{-kInf, sign * t.value};
    case TrialRecord::State::Pruned:
      if (!t.last_intermediate) return Rank{1, 0.0};
      if (std::isnan(t.last_intermediate->second)) return Rank{-t.last_intermediate->first, kInf};
      return Rank{-t.last_intermediate->first, sign * t.last_intermediate->second};
  }
  return std::nullopt;
}

RankedHistory::RankedHistory(std::vector<Distribution> space, std::size_t bins, bool maximize,
                             bool constant_liar)
    : space_(std::move(space)),
      bins_(bins),
      sign_(maximize ? -1.0 : 1.0),
      constant_liar_(constant_liar) {
  for (std::size_t p = 0; p < space_.size(); ++p) {
    bounds_.push_back(estimator_bounds(space_[p]));
    sums_.emplace_back(slice_count(p));
  }
  observed_.assign(space_.size(), 0);
}

std::size_t RankedHistory::slice_count(std::size_t p) const {
  return space_[p].kind == Distribution::Kind::Categorical ? space_[p].choices : bins_;
}

std::optional<RankedHistory::Cell> RankedHistory::cell_of(
    std::size_t p, const std::optional<double>& value) const {
  if (!value) return std::nullopt;
  const Distribution& d = space_[p];
  if (d.kind == Distribution::Kind::Categorical) return Cell{static_cast<std::uint32_t>(*value), 0};
  const auto [low, high] = bounds_[p];
  const double x = d.log ? std::log(*value) : *value;
  const double unit = high > low ? std::clamp((x - low) / (high - low), 0.0, 1.0) : 0.0;
  const auto slice =
      std::min(bins_ - 1, static_cast<std::size_t>(unit * static_cast<double>(bins_)));
  return Cell{static_cast<std::uint32_t>(slice),
              static_cast<std::uint64_t>(std::llround(unit * kFixedScale))};
}

void RankedHistory::account(std::size_t id, const Entry& e, bool add) {
  if (!e.rank) return;
  for (std::size_t p = 0; p < e.cells.size(); ++p) {
    if (!e.cells[p]) continue;
    Sums& s = sums_[p][e.cells[p]->slice];
    const std::uint64_t x = e.cells[p]->x;
    observed_[p] += add ? 1 : std::size_t(-1);
    if (add) {
      s.count += 1;
      s.t += id;
      s.x += x;
      s.tx += static_cast<Wide>(id) * x;
    } else {
      s.count -= 1;
      s.t -= id;
      s.x -= x;
      s.tx -= static_cast<Wide>(id) * x;
    }
  }
  if (add)
    order_.emplace(*e.rank, id);
  else
    order_.erase({*e.rank, id});
  if (e.finished) finished_ += add ? 1 : std::size_t(-1);
}

void RankedHistory::update(std::size_t id, const TrialRecord& record) {
  if (id >= entries_.size()) {
    // Default records in between: running, no parameters (ranked under constant_liar).
    const Entry blank{rank_of(TrialRecord{}, sign_, constant_liar_), false, {}};
    for (std::size_t i = entries_.size(); i < id; ++i) {
      entries_.push_back(blank);
      account(i, entries_.back(), true);
    }
    entries_.push_back(Entry{});
  } else {
    account(id, entries_[id], false);
  }
  Entry& e = entries_[id];
  e.rank = rank_of(record, sign_, constant_liar_);
  e.finished = is_finished(record);
  e.cells.assign(space_.size(), std::nullopt);
  for (std::size_t p = 0; p < space_.size() && p < record.params.size(); ++p)
    e.cells[p] = cell_of(p, record.params[p]);
  account(id, e, true);
}

std::vector<std::size_t> RankedHistory::best(std::size_t n) const {
  std::vector<std::size_t> ids;
  for (auto it = order_.begin(); it != order_.end() && ids.size() < n; ++it)
    ids.push_back(it->second);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::size_t> RankedHistory::ranked_except(
    const std::vector<std::size_t>& excluded) const {
  std::vector<std::size_t> ids;
  for (std::size_t id = 0; id < entries_.size(); ++id)
    if (entries_[id].rank && !contains(excluded, id)) ids.push_back(id);
  return ids;
}

std::size_t RankedHistory::count_except(std::size_t p,
                                        const std::vector<std::size_t>& excluded) const {
  std::size_t n = observed_[p];
  for (const auto id : excluded)
    n -= entries_[id].rank && entries_[id].cells[p] ? 1 : 0;
  return n;
}

Slices RankedHistory::slices_except(std::size_t p, const std::vector<std::size_t>& excluded) const {
  // Trials from `flat` on weigh 1; those before weigh alpha + beta t. The linear part
  // comes from the integer sums less the excluded and flat trials; those few are
  // walked one by one.
  const std::size_t n = count_except(p, excluded);
  const std::size_t flat = entries_.size() > kFlatTail ? entries_.size() - kFlatTail : 0;
  std::vector<Sums> linear = sums_[p];
  std::vector<double> flat_mass(linear.size(), 0.0), flat_x(linear.size(), 0.0);
  const auto take_out = [&](std::size_t id) {
    const Entry& e = entries_[id];
    if (!e.rank || !e.cells[p]) return;
    Sums& s = linear[e.cells[p]->slice];
    s.count -= 1;
    s.t -= id;
    s.x -= e.cells[p]->x;
    s.tx -= static_cast<Wide>(id) * e.cells[p]->x;
  };
  for (const auto id : excluded)
    if (id < flat) take_out(id);
  for (std::size_t id = flat; id < entries_.size(); ++id) {
    take_out(id);
    const Entry& e = entries_[id];
    if (!e.rank || !e.cells[p] || contains(excluded, id)) continue;
    flat_mass[e.cells[p]->slice] += 1;
    flat_x[e.cells[p]->slice] += static_cast<double>(e.cells[p]->x);
  }
  Slices out;
  out.observations = n;
  if (n == 0) return out;
  const double alpha = 1.0 / static_cast<double>(n);
  const double beta = flat > 0 ? (1.0 - alpha) / static_cast<double>(flat) : 0.0;
  const auto [low, high] = bounds_[p];
  out.mass.resize(linear.size());
  out.mean.resize(linear.size());
  for (std::size_t b = 0; b < linear.size(); ++b) {
    const Sums& s = linear[b];
    const double mass =
        alpha * static_cast<double>(s.count) + beta * static_cast<double>(s.t) + flat_mass[b];
    const double moment =
        alpha * static_cast<double>(s.x) + beta * static_cast<double>(s.tx) + flat_x[b];
    out.mass[b] = mass;
    out.mean[b] =
        mass > 0 ? low + (high - low) * (moment / mass / kFixedScale) : static_cast<double>(b);
  }
  if (space_[p].kind == Distribution::Kind::Categorical)
    for (std::size_t b = 0; b < linear.size(); ++b)
      out.mean[b] = static_cast<double>(b);
  return out;
}

}  // namespace slurmtune::core::tpe
