// Probe for the trial-group turnaround benchmark (bench_turnaround.py).
// Under `slurmtune run` ([trial] mode = "mpi"): every trial reports once, with t0 = the
// wall-clock time its train function started, then twice more, the last time with
// report_ms = how long the one before took (the collective report's round trip). Without
// SLURMTUNE_ADDR: a plain MPI program whose rank 0 prints the time right after MPI_Init (a bare
// srun's start-up).
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
    const double x = t.param<double>("x");
    t.report(1, {{"loss", x}, {"t0", t0}});
    // The collective report's round trip as every rank sees it, reported at step 2.
    const double before = now();
    t.report(1.5, {{"loss", x}, {"t0", t0}});
    t.report(2, {{"loss", x}, {"t0", t0}, {"report_ms", 1e3 * (now() - before)}});
  });
}
