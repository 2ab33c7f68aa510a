#include "core/schedulers/scheduler_spec.hpp"

#include <array>
#include <cmath>
#include <utility>

#include "core/error.hpp"

namespace slurmtune::core {
namespace {
// Each enum's study-file words, in the order an error message lists them: one table serves
// the reader (word to value) and the recorded file (value to word).
template <typename Enum>
using Keyword = std::pair<Enum, std::string_view>;
template <typename Enum, std::size_t N>
using Keywords = std::array<Keyword<Enum>, N>;

constexpr Keywords<SchedulerType, 7> kTypes{{
    {SchedulerType::Fifo, "fifo"},
    {SchedulerType::Asha, "asha"},
    {SchedulerType::AshaPromotion, "asha_promotion"},
    {SchedulerType::Hyperband, "hyperband"},
    {SchedulerType::Median, "median"},
    {SchedulerType::Pbt, "pbt"},
    {SchedulerType::FreezeThaw, "freeze_thaw"},
}};
constexpr Keywords<JobCost, 3> kJobCosts{
    {{JobCost::Resource, "resource"}, {JobCost::Seconds, "seconds"}, {JobCost::None, "none"}}};
constexpr Keywords<TrustWaiver, 4> kTrustWaivers{{{TrustWaiver::None, "none"},
                                                  {TrustWaiver::Gain, "gain"},
                                                  {TrustWaiver::Overtake, "overtake"},
                                                  {TrustWaiver::Lesson, "lesson"}}};

template <typename Enum, std::size_t N>
std::string_view word_of(const Keywords<Enum, N>& table, Enum value) {
  for (const auto& [v, word] : table)
    if (v == value) return word;
  return "?";
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(const Keywords<Enum, N>& table, std::string_view word) {
  for (const auto& [v, w] : table)
    if (w == word) return v;
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::vector<std::string_view> words_of(const Keywords<Enum, N>& table) {
  std::vector<std::string_view> words;
  for (const auto& entry : table)
    words.push_back(entry.second);
  return words;
}
}  // namespace

std::string_view scheduler_keyword(SchedulerType type) {
  return word_of(kTypes, type);
}
std::optional<SchedulerType> scheduler_type_from_keyword(std::string_view word) {
  return value_of(kTypes, word);
}
std::vector<std::string_view> scheduler_keywords() {
  return words_of(kTypes);
}

std::string_view job_cost_keyword(JobCost cost) {
  return word_of(kJobCosts, cost);
}
std::optional<JobCost> job_cost_from_keyword(std::string_view word) {
  return value_of(kJobCosts, word);
}
std::vector<std::string_view> job_cost_keywords() {
  return words_of(kJobCosts);
}

std::string_view trust_waiver_keyword(TrustWaiver waiver) {
  return word_of(kTrustWaivers, waiver);
}
std::optional<TrustWaiver> trust_waiver_from_keyword(std::string_view word) {
  return value_of(kTrustWaivers, word);
}
std::vector<std::string_view> trust_waiver_keywords() {
  return words_of(kTrustWaivers);
}

std::vector<double> geometric_milestones(double grace, double rf, double max_t, int skip) {
  std::vector<double> out;
  if (!(grace > 0) || !(rf > 1)) return out;
  double m = grace;
  for (int k = 0; m <= max_t; ++k, m *= rf)
    if (k >= skip) out.push_back(m);
  return out;
}

}  // namespace slurmtune::core
