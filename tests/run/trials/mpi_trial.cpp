// An MPI trial: every rank computes part of the loss, an allreduce sums it, rank 0
// reports (with the world size as a metric, so tests see each trial's MPI world) and
// broadcasts the decision; the other ranks ASK once to exercise the protocol.
#include <mpi.h>

#include <iostream>
#include <slurmtune/client.hpp>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? std::stoi(argv[1]) : 9;
  try {
    auto client = slurmtune::Client::from_environment();
    if (rank != 0) client.ask();
    const double x = client.param<double>("x");
    for (int step = 1; step <= steps; ++step) {
      const double part = ((x - 0.3) * (x - 0.3) + 1.0 / step) / size;
      double loss = 0;
      MPI_Allreduce(&part, &loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      int go_on = 1;
      if (rank == 0)
        go_on = client.report(step, {{"loss", loss}, {"ranks", double(size)}}) ==
                slurmtune::Decision::Continue;
      MPI_Bcast(&go_on, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (!go_on) break;
    }
  } catch (const slurmtune::ClientError& e) {
    std::cerr << "mpi_trial rank " << rank << ": " << e.what() << '\n';
    MPI_Abort(MPI_COMM_WORLD, 1);  // the other ranks may wait in a collective
  }
  MPI_Finalize();
  return 0;
}
