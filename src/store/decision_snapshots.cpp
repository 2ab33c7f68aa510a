#include "store/decision_snapshots.hpp"

#include <algorithm>
#include <cmath>
#include <exception>

namespace slurmtune::store {

DecisionSnapshots::DecisionSnapshots(std::unique_ptr<DecisionReplay> replay, std::size_t metrics,
                                     std::uint64_t session_first_seq, double interval_s,
                                     int slot_in_use, std::function<void(const std::string&)> warn)
    : metrics_(metrics),
      replay_(std::move(replay)),
      interval_(interval_s),
      last_(std::chrono::steady_clock::now()),
      next_slot_(slot_in_use == 0 ? 1 : 0),
      warn_(std::move(warn)) {
  replay_->add_session(session_first_seq);
  scratch_.values.resize(metrics_);
}

void DecisionSnapshots::started(core::TrialId trial, const core::Configuration& config) {
  rows_.started.push_back({trial, config});
}

void DecisionSnapshots::event(const EventRecord& e) {
  rows_.events.push_back(e);
}

void DecisionSnapshots::report(std::uint64_t seq, core::TrialId trial, double step, double time,
                               std::span<const double> values) {
  rows_.reports.push_back({seq, trial, step, time, rows_.values.size()});
  for (std::size_t k = 0; k < metrics_; ++k)
    rows_.values.push_back(k < values.size() ? values[k] : NAN);
}

DecisionSnapshots::Rows DecisionSnapshots::take_rows() {
  Rows taken;
  std::swap(taken, rows_);
  // The next flush takes about as many: room for them now, not by doubling as they come.
  rows_.events.reserve(taken.events.size());
  rows_.reports.reserve(taken.reports.size());
  rows_.values.reserve(taken.values.size());
  return taken;
}

// Events and reports merged by seq, as a reader of the file walks them.
void DecisionSnapshots::replay_in_order(const Rows& rows) {
  for (const Started& s : rows.started) {  // only read at their start events
    if (s.trial >= configs_.size()) configs_.resize(s.trial + 1);
    configs_[s.trial] = s.config;
  }
  std::size_t next_event = 0;
  const auto events_before = [&](std::uint64_t seq) {
    for (; next_event < rows.events.size() && rows.events[next_event].seq < seq; ++next_event) {
      const EventRecord& e = rows.events[next_event];
      replay_->event(e, e.trial < configs_.size() ? &configs_[e.trial] : nullptr);
    }
  };
  for (const Report& r : rows.reports) {
    events_before(r.seq);
    scratch_.seq = r.seq;
    scratch_.trial = r.trial;
    scratch_.step = r.step;
    scratch_.time = r.time;
    std::copy_n(rows.values.begin() + static_cast<std::ptrdiff_t>(r.first_value), metrics_,
                scratch_.values.begin());
    replay_->metric(scratch_);
  }
  events_before(UINT64_MAX);
}

std::optional<DecisionSnapshots::Due> DecisionSnapshots::replay(const Rows& rows) {
  if (!replay_) return std::nullopt;  // stopped after an error
  try {
    replay_in_order(rows);
    const auto now = std::chrono::steady_clock::now();
    if (!forced_.exchange(false) && now - last_ < interval_) return std::nullopt;
    last_ = now;
    Due due{next_slot_, replay_->snapshot()};
    next_slot_ = 1 - next_slot_;
    return due;
  } catch (const std::exception& e) {
    replay_.reset();
    if (warn_)
      warn_(std::string("decision snapshots stopped (a resume will replay every row): ") +
            e.what());
    return std::nullopt;
  }
}

}  // namespace slurmtune::store
