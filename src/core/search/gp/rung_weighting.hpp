#pragma once
// Hyper-Tune's per-rung weighting (Li, Shen, Jiang, Zhang, Li, Cui, "Hyper-Tune:
// towards efficient hyper-parameter tuning at scale", VLDB 2022), adapted to MOBSTER's
// one joint model: how far to trust what the model says at each rung, measured by how
// well that rung ranks the configurations the way the highest well-observed rung (the
// reference) does. The paper weighs separate per-fidelity surrogates by sampled ranking
// losses and combines their predictions; here the rungs are resources of one Gaussian
// process, agreement is counted exactly (no sampling, so replay and resume decide alike),
// and the acquisition is the weighted sum of the expected improvements at each rung.
#include <map>
#include <optional>
#include <span>

namespace slurmtune::core {

/// The share of pairs (i, j) that `a` and `b` order alike (ties count half); 0.5 is chance.
/// Both spans are of one length, at least 2.
double concordance(std::span<const double> a, std::span<const double> b);

/// Weights summing to 1 from each rung's agreement with the reference (nullopt: too few
/// configurations seen at both to tell): proportional to max(0, 2 * agreement - 1), i.e.
/// Kendall's tau above chance. When no rung ranks better than chance, `fallback` (the
/// first rung) alone.
std::map<double, double> rung_weights(const std::map<double, std::optional<double>>& agreement,
                                      double fallback);

}  // namespace slurmtune::core
