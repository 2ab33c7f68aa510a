#pragma once
// A whole simulated study recorded into a results file: what the store's tests read,
// resume and tamper with.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/simulation/simulation.hpp"
#include "core/study/study_spec.hpp"
#include "store/schema.hpp"
#include "store/simulation_recorder.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::testing {

/// Records a whole simulated study (deterministic) of `s` on `workers` into `path`, in a
/// file of `schema`; `also` sees every event the file records.
inline core::SimulationSummary simulate_into(const std::string& path, const core::StudySpec& s,
                                             std::size_t workers = 8,
                                             std::int64_t schema = store::kSchemaVersion,
                                             core::SimulationObserver* also = nullptr) {
  store::WriterOptions options;
  options.virtual_clock = true;
  options.schema_version = schema;
  auto writer = store::StudyWriter::create(path, s, options);
  store::SimulationRecorder recorder(*writer, also);
  core::SimulationOptions sim;
  sim.workers = workers;
  return core::simulate_study(s, sim, &recorder);
}

}  // namespace slurmtune::testing
