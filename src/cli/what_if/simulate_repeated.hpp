#pragma once
// Output of `slurmtune simulate --repeat K` and --curve-out.
#include <cstddef>
#include <string>

#include "core/simulation/repeated.hpp"

namespace slurmtune::cli {

/// `objective`: what the trials ran on ("curves table.csv (500 configurations)").
void print_repeated_text(const core::StudySpec& study, const core::RepeatedSimulation& sim,
                         const std::string& objective, std::size_t workers);
void print_repeated_json(const core::StudySpec& study, const core::RepeatedSimulation& sim,
                         const std::string& objective_json, double wall_s);
/// Best-so-far against virtual time, quartiles over seeds, one row per (series, time).
void write_anytime_csv(const std::string& path, const core::StudySpec& study,
                       const core::RepeatedSimulation& sim);

}  // namespace slurmtune::cli
