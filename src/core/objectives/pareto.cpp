#include "core/objectives/pareto.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace slurmtune::core {

bool dominates(std::span<const double> a, std::span<const double> b) {
  if (std::equal(a.begin(), a.end(), b.begin(), b.end())) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(a[k] <= b[k])) return false;
  return true;
}

double total_violation(const std::vector<double>& constraints) {
  double sum = 0;  // Python's sum(): left to right from 0
  for (const double c : constraints)
    if (c > 0) sum += c;
  return sum;
}

bool is_feasible(const ParetoPoint& p) {
  return p.constraints &&
         std::all_of(p.constraints->begin(), p.constraints->end(), [](double c) { return c <= 0; });
}

bool constrained_dominates(const ParetoPoint& a, const ParetoPoint& b) {
  if (!a.constraints && !b.constraints) return dominates(a.loss, b.loss);
  if (!b.constraints) return true;
  if (!a.constraints) return false;
  const bool fa = is_feasible(a), fb = is_feasible(b);
  if (fa && fb) return dominates(a.loss, b.loss);
  if (fa) return true;
  if (fb) return false;
  return total_violation(*a.constraints) < total_violation(*b.constraints);
}

std::vector<std::vector<std::size_t>> nondominated_fronts(std::vector<std::size_t> members,
                                                          const Dominance& dominance) {
  std::map<std::size_t, std::size_t> dominated_count;
  std::map<std::size_t, std::vector<std::size_t>> dominated_by;  // member -> those it dominates
  for (std::size_t i = 0; i < members.size(); ++i)
    for (std::size_t j = i + 1; j < members.size(); ++j) {
      const std::size_t p = members[i], q = members[j];
      if (dominance(p, q)) {
        dominated_by[p].push_back(q);
        ++dominated_count[q];
      } else if (dominance(q, p)) {
        dominated_by[q].push_back(p);
        ++dominated_count[p];
      }
    }
  std::vector<std::vector<std::size_t>> fronts;
  while (!members.empty()) {
    std::vector<std::size_t> front;
    std::size_t i = 0;
    while (i < members.size()) {
      if (dominated_count[members[i]] != 0) {
        ++i;
        continue;
      }
      front.push_back(members[i]);
      members[i] = members.back();  // Optuna's swap with the last, in place
      members.pop_back();
    }
    for (const auto x : front)
      for (const auto y : dominated_by[x])
        --dominated_count[y];
    fronts.push_back(std::move(front));
  }
  return fronts;
}

void crowding_distance_sort(std::vector<std::size_t>& members,
                            const std::vector<std::vector<double>>& values) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::map<std::size_t, double> distance;
  if (members.empty()) return;
  const std::size_t objectives = values[members.front()].size();
  for (std::size_t k = 0; k < objectives; ++k) {
    std::stable_sort(members.begin(), members.end(),
                     [&](std::size_t a, std::size_t b) { return values[a][k] < values[b][k]; });
    if (values[members.front()][k] == values[members.back()][k]) continue;
    std::vector<double> vs{-kInf};
    for (const auto m : members)
      vs.push_back(values[m][k]);
    vs.push_back(kInf);
    const double v_min = *std::find_if(vs.begin(), vs.end(), [](double x) { return x != -kInf; });
    const double v_max = *std::find_if(vs.rbegin(), vs.rend(), [](double x) { return x != kInf; });
    double width = v_max - v_min;
    if (width <= 0) width = 1.0;
    for (std::size_t j = 0; j < members.size(); ++j) {
      const double gap = vs[j] == vs[j + 2] ? 0.0 : vs[j + 2] - vs[j];
      distance[members[j]] += gap / width;
    }
  }
  std::stable_sort(members.begin(), members.end(),
                   [&](std::size_t a, std::size_t b) { return distance[a] < distance[b]; });
  std::reverse(members.begin(), members.end());
}

std::vector<std::size_t> pareto_front(const std::vector<ParetoPoint>& points, bool constrained) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (constrained && !is_feasible(points[i])) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < points.size() && !dominated; ++j)
      dominated =
          (!constrained || is_feasible(points[j])) && dominates(points[j].loss, points[i].loss);
    if (!dominated) front.push_back(i);
  }
  return front;
}

}  // namespace slurmtune::core
