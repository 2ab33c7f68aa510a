#include "runtime/control/loop_stalls.hpp"

#include <algorithm>
#include <cmath>

#include "core/number_text.hpp"
#include "store/file/flush_thread.hpp"

namespace slurmtune::runtime {
namespace {

using Clock = LoopStalls::Clock;

// The turns the summary counts by whether the loop's thread ran them.
constexpr auto kLongTurn = std::chrono::milliseconds(10);

double in_ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

std::string ms(Clock::duration d) {
  return core::format_double(std::round(in_ms(d) * 10) / 10) + " ms";
}

std::string seconds(Clock::duration d) {
  return core::format_double(std::round(in_ms(d) / 10) / 100) + " s";
}

const std::string& name_of(core::LoopWork work) {
  return core::loop_work_names()[static_cast<std::size_t>(work)];
}

}  // namespace

LoopStalls::Scope::Scope(LoopStalls& stalls, Work work)
    : stalls_(stalls), work_(work), start_(stalls.now_()), measured_before_(stalls.measured_) {}

LoopStalls::Scope::~Scope() {
  // Its own time: what passed less what the scopes nested in it claimed meanwhile.
  const auto own = (stalls_.now_() - start_) - (stalls_.measured_ - measured_before_);
  stalls_.split_[static_cast<std::size_t>(work_)] += own;
  stalls_.measured_ += own;
}

LoopStalls::Work LoopStalls::Turn::dominant() const {
  return static_cast<Work>(std::max_element(work.begin(), work.end()) - work.begin());
}

void LoopStalls::periodic_begins(Clock::time_point woke) {
  woke_ = woke;
  periodic_from_ = now_();
  measured_at_periodic_ = measured_;
}

void LoopStalls::turn_ends() {
  const auto end = now_();
  const auto cpu = cpu_now_();
  const auto unclaimed = [](Clock::duration span, Clock::duration claimed) {
    return std::max(Clock::duration::zero(), span - claimed);
  };
  Turn turn;
  turn.work = split_;
  turn.work[static_cast<std::size_t>(Work::Messages)] +=
      unclaimed(periodic_from_ - woke_, measured_at_periodic_);
  turn.work[static_cast<std::size_t>(Work::Periodic)] +=
      unclaimed(end - periodic_from_, measured_ - measured_at_periodic_);
  for (const auto part : turn.work)
    turn.total += part;
  turn.ran = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(cpu - cpu_at_turn_end_));
  cpu_at_turn_end_ = cpu;
  if (turn.total > kLongTurn && 2 * turn.ran < turn.total) ++long_turns_off_core_;
  split_ = {};
  measured_ = measured_at_periodic_ = {};

  if (turns_++ == 0) first_turn_ = woke_;
  last_turn_ = end;
  for (std::size_t w = 0; w < turn.work.size(); ++w)
    busy_by_work_[w] += turn.work[w];
  by_length_.add(turn.total);
  if (turn.total > longest_.total) longest_ = turn;
  if (turn.total > window_.total) window_ = turn;
  const auto index = static_cast<std::int64_t>((end - first_turn_) / kBucket);
  Bucket& bucket = recent_[static_cast<std::size_t>(index) % kRecentBuckets];
  if (bucket.index != index) bucket = Bucket{index, {}, {}};
  bucket.busy += turn.total;
  if (turn.total > bucket.longest.total) bucket.longest = turn;
}

std::string LoopStalls::take_window() {
  std::string text = "longest loop turn " + ms(window_.total);
  if (window_.total > Clock::duration::zero()) text += " (" + name_of(window_.dominant()) + ")";
  window_ = Turn{};
  return text;
}

double LoopStalls::longest_ms() const {
  return in_ms(longest_.total);
}

std::string LoopStalls::summary() const {
  // What filled the longest turn, its largest parts first.
  std::array<std::size_t, core::kLoopWorkKinds> order{};
  for (std::size_t w = 0; w < order.size(); ++w)
    order[w] = w;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return longest_.work[a] > longest_.work[b];
  });
  std::string parts;
  for (const std::size_t w : order) {
    if (longest_.work[w] < std::chrono::microseconds(50)) continue;  // shows as 0.0 ms
    parts +=
        (parts.empty() ? "" : ", ") + name_of(static_cast<Work>(w)) + " " + ms(longest_.work[w]);
  }
  const auto over = [&](std::size_t from) { return std::to_string(by_length_.from(from)); };
  return "loop: longest turn " + ms(longest_.total) + " (" + parts + (parts.empty() ? "" : "; ") +
         "its thread ran " + ms(longest_.ran) + " of it); turns over 10 ms: " + over(2) + " (" +
         std::to_string(long_turns_off_core_) +
         " of them with its thread on the core under half the turn), over 100 ms: " + over(3) +
         ", over 1 s: " + over(4) + " (of " + std::to_string(turns_) + ")";
}

std::string LoopStalls::work_summary() const {
  Clock::duration busy{};
  for (const auto part : busy_by_work_)
    busy += part;
  std::string text = "loop: busy " + seconds(busy) + " of " + seconds(last_turn_ - first_turn_);
  std::string separator = ": ";
  for (std::size_t w = 0; w < busy_by_work_.size(); ++w) {
    if (busy_by_work_[w] < std::chrono::milliseconds(5)) continue;  // shows as 0 s
    text += separator + name_of(static_cast<Work>(w)) + " " + seconds(busy_by_work_[w]);
    separator = ", ";
  }
  return text + "; turns " + by_length_.text();
}

core::LoopFigures LoopStalls::figures() const {
  core::LoopFigures figures;
  figures.longest_ms = in_ms(longest_.total);
  figures.longest_work = longest_.dominant();
  figures.turns = turns_;
  figures.over_10ms = by_length_.from(2);
  figures.over_100ms = by_length_.from(3);
  figures.over_1s = by_length_.from(4);
  if (turns_ == 0) return figures;
  // About the last minute: the buckets of the last kRecentBuckets, the current one partly.
  const auto current = static_cast<std::int64_t>((last_turn_ - first_turn_) / kBucket);
  const std::int64_t oldest = std::max<std::int64_t>(0, current + 1 - kRecentBuckets);
  Turn recent;
  Clock::duration busy{};
  for (const Bucket& bucket : recent_) {
    if (bucket.index < oldest) continue;
    busy += bucket.busy;
    if (bucket.longest.total > recent.total) recent = bucket.longest;
  }
  const auto span = last_turn_ - (first_turn_ + oldest * kBucket);
  figures.recent_longest_ms = in_ms(recent.total);
  figures.recent_work = recent.dominant();
  figures.recent_busy =
      span > Clock::duration::zero()
          ? std::min(1.0, std::chrono::duration<double>(busy) / std::chrono::duration<double>(span))
          : 1.0;
  return figures;
}

double loop_thread_cpu_seconds() {
  return store::this_thread_cpu_seconds();
}

}  // namespace slurmtune::runtime
