// An MPI program run as an ordinary 4-rank trial ([trial] command, not run_trials): every
// rank computes part of the loss, an allreduce sums it, and every rank calls the
// collective report of Trial::from_environment (with the world size as a metric, so
// tests see each trial's MPI world). Each rank prints the step it left at, so tests see
// that a stop reached every rank at the same step.
#include <mpi.h>

#include <cstdio>
#include <slurmtune/trial.hpp>
#include <string>

namespace {

int train(slurmtune::Trial& t, int steps) {
  const double x = t.param<double>("x");
  int step = 1;
  for (; step <= steps; ++step) {
    const double part = ((x - 0.3) * (x - 0.3) + 1.0 / step) / t.size();
    double loss = 0;
    MPI_Allreduce(&part, &loss, 1, MPI_DOUBLE, MPI_SUM, t.comm());
    if (t.report(step, {{"loss", loss}, {"ranks", double(t.size())}}) !=
        slurmtune::Decision::Continue)
      break;
  }
  return step;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int steps = argc > 1 ? std::stoi(argv[1]) : 9;
  int status = 0;
  try {
    const auto trial = slurmtune::Trial::from_environment(MPI_COMM_WORLD);
    const int left = train(*trial, steps);
    std::printf("rank %d left at step %d\n", trial->rank(), left > steps ? steps : left);
  } catch (const slurmtune::ClientError& e) {
    // Thrown on every rank alike (the decision and any loss of the coordinator are
    // broadcast), so no rank is left waiting in a collective.
    std::fprintf(stderr, "mpi_trial: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
