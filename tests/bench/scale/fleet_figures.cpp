#include "fleet_figures.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>

namespace slurmtune::fleet {
namespace {

// The p-quantile q of `values` (reordered in place); 0 when there are none.
double percentile(std::vector<float>& values, double q) {
  if (values.empty()) return 0;
  const auto at = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<long>(at), values.end());
  return values[at];
}

}  // namespace

void write_figures(Figures& figures, std::size_t nodes, const std::string& path) {
  std::vector<float> steady;
  for (std::size_t i = 0; i < figures.sent_at.size(); ++i)
    if (figures.sent_at[i] > figures.last_welcome + std::chrono::seconds(10) &&
        figures.sent_at[i] < figures.first_end - std::chrono::seconds(2))
      steady.push_back(figures.round_trips_ms[i]);
  const double steady_max = steady.empty() ? 0 : *std::max_element(steady.begin(), steady.end());
  const double steady_p50 = percentile(steady, 0.5), steady_p99 = percentile(steady, 0.99);
  // Where the tail lies: by the kind of decision, and by 10 s window of the run (from
  // the first report sent: how many reports each window sent, and how many of them
  // took over 20 ms).
  std::vector<float> with_checkpoint, without;
  // [reports, over 20 ms, coordinator's part over 20 ms, the fleet's socket wait over 20 ms]
  std::map<long, std::array<std::uint64_t, 4>> windows;
  const Clock::time_point first_sent =
      figures.sent_at.empty() ? Clock::time_point{}
                              : *std::min_element(figures.sent_at.begin(), figures.sent_at.end());
  for (std::size_t i = 0; i < figures.round_trips_ms.size(); ++i) {
    (figures.asked_checkpoint[i] ? with_checkpoint : without).push_back(figures.round_trips_ms[i]);
    auto& window = windows[static_cast<long>(
        std::chrono::duration<double>(figures.sent_at[i] - first_sent).count() / 10)];
    ++window[0];
    if (figures.round_trips_ms[i] > 20) ++window[1];
  }
  for (std::size_t i = 0; i < figures.to_socket_ms.size(); ++i) {
    auto& window = windows[static_cast<long>(
        std::chrono::duration<double>(figures.socket_sent_at[i] - first_sent).count() / 10)];
    if (figures.to_socket_ms[i] > 20) ++window[2];
    if (figures.in_socket_ms[i] > 20) ++window[3];
  }
  auto& rt = figures.round_trips_ms;
  const double p50 = percentile(rt, 0.5), p99 = percentile(rt, 0.99);
  const double max = rt.empty() ? 0 : *std::max_element(rt.begin(), rt.end());
  std::ofstream out(path);
  out << "{\"nodes\": " << nodes << ", \"reports\": " << figures.reports
      << ", \"decisions\": " << figures.decisions << ", \"trials\": " << figures.trials
      << ", \"refused\": " << figures.refused << ", \"killed\": " << figures.killed
      << ", \"p50_ms\": " << p50 << ", \"p99_ms\": " << p99 << ", \"max_ms\": " << max
      << ", \"samples\": " << rt.size() << ", \"waited_s\": " << figures.waited_s
      << ", \"lived_s\": " << figures.lived_s << ", \"steady_samples\": " << steady.size()
      << ", \"steady_p50_ms\": " << steady_p50 << ", \"steady_p99_ms\": " << steady_p99
      << ", \"steady_max_ms\": " << steady_max
      << ", \"checkpoint_samples\": " << with_checkpoint.size()
      << ", \"checkpoint_p99_ms\": " << percentile(with_checkpoint, 0.99)
      << ", \"other_p99_ms\": " << percentile(without, 0.99)
      << ", \"outside_p50_ms\": " << percentile(figures.outside_ms, 0.5)
      << ", \"outside_p99_ms\": " << percentile(figures.outside_ms, 0.99)
      << ", \"outside_max_ms\": "
      << (figures.outside_ms.empty()
              ? 0.0
              : *std::max_element(figures.outside_ms.begin(), figures.outside_ms.end()))
      << ", \"outside_samples\": " << figures.outside_ms.size()
      << ", \"to_socket_p50_ms\": " << percentile(figures.to_socket_ms, 0.5)
      << ", \"to_socket_p99_ms\": " << percentile(figures.to_socket_ms, 0.99)
      << ", \"in_socket_p50_ms\": " << percentile(figures.in_socket_ms, 0.5)
      << ", \"in_socket_p99_ms\": " << percentile(figures.in_socket_ms, 0.99)
      << ", \"socket_samples\": " << figures.to_socket_ms.size()
      << ", \"lag_p99_ms\": " << percentile(figures.timers_late_ms, 0.99) << ", \"lag_max_ms\": "
      << (figures.timers_late_ms.empty()
              ? 0.0
              : *std::max_element(figures.timers_late_ms.begin(), figures.timers_late_ms.end()))
      << ", \"windows\": [";
  for (auto w = windows.begin(); w != windows.end(); ++w)
    out << (w == windows.begin() ? "" : ", ") << "[" << w->first * 10 << ", " << w->second[0]
        << ", " << w->second[1] << ", " << w->second[2] << ", " << w->second[3] << "]";
  out << "]}\n";
}

}  // namespace slurmtune::fleet
