// Trial program for the coordinator-at-scale benchmark (bench_scale.py): reports every
// INTERVAL seconds for STEPS steps, each report carrying how long the previous report
// took to come back with its decision (the decision latency a trial sees). In a trial of
// several ranks, rank 0 reports and every other rank asks for the decision as often, each
// on a connection of its own.
//   load_probe STEPS INTERVAL
#include <chrono>
#include <cstdlib>
#include <slurmtune/client.hpp>
#include <thread>

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10;
  const double interval = argc > 2 ? std::atof(argv[2]) : 0.5;
  using Clock = std::chrono::steady_clock;
  auto client = slurmtune::Client::from_environment();
  double previous_ms = -1;  // none yet
  for (int step = 1; step <= steps; ++step) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    const auto before = Clock::now();
    const auto decision =
        client.rank() == 0
            ? client.report(step, {{"loss", 1.0 / step}, {"latency_ms", previous_ms}})
            : client.ask();
    previous_ms = std::chrono::duration<double, std::milli>(Clock::now() - before).count();
    if (decision != slurmtune::Decision::Continue) break;
  }
  return 0;
}
