#include "store/decision_snapshots.hpp"

#include <exception>

namespace slurmtune::store {

DecisionSnapshots::DecisionSnapshots(std::unique_ptr<DecisionReplay> replay,
                                     std::uint64_t session_first_seq, double interval_s,
                                     int slot_in_use, std::function<void(const std::string&)> warn)
    : replay_(std::move(replay)),
      interval_(interval_s),
      last_(std::chrono::steady_clock::now()),
      next_slot_(slot_in_use == 0 ? 1 : 0),
      warn_(std::move(warn)) {
  replay_->add_session(session_first_seq);
}

void DecisionSnapshots::started(core::TrialId trial, const core::Configuration& config) {
  rows_.emplace_back(Started{trial, config});
}

void DecisionSnapshots::event(const EventRecord& e) {
  rows_.emplace_back(e);
}

void DecisionSnapshots::metric(const MetricRecord& m) {
  rows_.emplace_back(m);
}

std::vector<DecisionSnapshots::Row> DecisionSnapshots::take_rows() {
  std::vector<Row> taken;
  taken.swap(rows_);
  return taken;
}

std::optional<DecisionSnapshots::Due> DecisionSnapshots::replay(const std::vector<Row>& rows) {
  if (!replay_) return std::nullopt;  // stopped after an error
  try {
    for (const Row& row : rows) {
      if (const auto* s = std::get_if<Started>(&row)) {
        if (s->trial >= configs_.size()) configs_.resize(s->trial + 1);
        configs_[s->trial] = s->config;
      } else if (const auto* e = std::get_if<EventRecord>(&row)) {
        replay_->event(*e, e->trial < configs_.size() ? &configs_[e->trial] : nullptr);
      } else {
        replay_->metric(std::get<MetricRecord>(row));
      }
    }
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
