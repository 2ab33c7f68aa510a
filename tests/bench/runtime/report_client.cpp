// Trial program for bench_control_plane: reports as fast as the coordinator answers.
//   report_client REPORTS
#include <cstdint>
#include <slurmtune/client.hpp>
#include <string>

int main(int argc, char** argv) {
  const int reports = argc > 1 ? std::stoi(argv[1]) : 1000;
  auto client = slurmtune::Client::from_environment();
  std::uint64_t state = 0x9e3779b97f4a7c15ULL ^ client.trial_id();
  for (int step = 1; step <= reports; ++step) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double loss = static_cast<double>(state >> 11) * 0x1.0p-53;
    if (client.report(step, {{"loss", loss}}) != slurmtune::Decision::Continue) break;
  }
  client.finish(true);
  return 0;
}
