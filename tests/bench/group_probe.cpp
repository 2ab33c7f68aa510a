// Probe for the trial-group turnaround benchmark (bench_turnaround.py).
// Under `slurmtune run` ([trial] mode = "mpi"): every trial reports once, with t0 = the
// wall-clock time its train function started, and ends. Without SLURMTUNE_ADDR: a plain
// MPI program whose rank 0 prints the time right after MPI_Init (a bare srun's start-up).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <slurmtune/trial.hpp>

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("SLURMTUNE_ADDR")) {
    MPI_Init(&argc, &argv);
    const double t0 = now();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) std::printf("%.6f\n", t0);
    MPI_Finalize();
    return 0;
  }
  return slurmtune::run_trials(argc, argv, [](slurmtune::Trial& t) {
    const double t0 = now();
    t.report(1, {{"loss", t.param<double>("x")}, {"t0", t0}});
  });
}
