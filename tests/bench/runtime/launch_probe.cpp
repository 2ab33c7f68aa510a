// Trial program for the launch benchmarks: takes the wall-clock time first thing in
// main(), then (under slurmtune run) reports it as the metric t0, or prints it.
//   launch_probe [SECONDS]   sleeps SECONDS before reporting (a trial that lasts)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <slurmtune/client.hpp>
#include <thread>

int main(int argc, char** argv) {
  const double t0 =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (!std::getenv("SLURMTUNE_ADDR")) {
    std::printf("%.6f\n", t0);
    return 0;
  }
  auto client = slurmtune::Client::from_environment();
  if (argc > 1) std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(argv[1])));
  client.report(1, {{"loss", 0.0}, {"t0", t0}});
  return 0;
}
