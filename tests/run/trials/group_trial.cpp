// An MPI program for [trial] mode = "mpi": slurmtune::run_trials splits the step into
// trial groups. Each trial checks that its communicator holds its own ranks only (a
// collective over it never mixes with another trial's), reports a loss averaged over
// its ranks, and checks that every rank received the same decision. Trial 2's first
// attempt throws on every rank (it must fail, be retried, and the group go on).
// `--kill-trial=N`: rank 1 of trial N's first attempt dies of SIGKILL after a checkpoint
// at step 1, which ends the whole MPI step; the coordinator fails the running trials, relaunches
// the step, and they resume from their collective HDF5 checkpoints, checked byte for byte.
// `--hang-trial=N`: trial N's first attempt checkpoints step 1, then hangs on every rank
// without reporting; [trial] report_timeout_s must end its step the same way.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <slurmtune/dp.hpp>
#include <slurmtune/trial.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

long kill_trial = -1, hang_trial = -1;
int sleep_ms = 0;  // per step, to give a test time to interrupt the study

// What rank `rank` keeps at `step`: a slice whose length differs between ranks.
std::vector<double> slice(int rank, double step) {
  std::vector<double> v(static_cast<std::size_t>(3 + rank));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = step * 1000 + rank * 10 + static_cast<double>(i) + 0.125;
  return v;
}

// Restores the collective checkpoint and checks it byte for byte; the next step.
int first_step(slurmtune::Trial& t) {
  int next = 1;
  t.restore([&](slurmtune::CheckpointReader& r) {
    const std::vector<double> mine = r.read_sliced("weights");
    const std::vector<double> state = r.read_root("state");
    const std::vector<double> expected = slice(t.rank(), r.step());
    if (mine.size() != expected.size() ||
        std::memcmp(mine.data(), expected.data(), mine.size() * sizeof(double)) != 0 ||
        state.size() != 1 || state[0] != r.step())
      throw std::logic_error("checkpoint restored different bytes");
    next = static_cast<int>(r.step()) + 1;
  });
  return next;
}

void train(slurmtune::Trial& t) {
  int identical = 0;
  MPI_Comm_compare(t.comm(), MPI_COMM_WORLD, &identical);
  // Isolation: the sum of the trial id over the communicator is id * size only if every
  // member runs this same trial.
  double ids[1] = {static_cast<double>(t.id())};
  slurmtune::dp::sum(t, ids);
  const bool mixed = identical == MPI_IDENT || ids[0] != static_cast<double>(t.id()) * t.size();
  if (t.id() == 2 && t.attempt() == 0) throw std::runtime_error("injected failure");
  // Collective; on the test machines (no GPU) NCCL must decline, saying so, not crash.
  static_cast<void>(t.nccl_comm());
  const double x = t.param<double>("x");
  // has_param: what a conditional space asks before param<T> (the same on every rank).
  if (!t.has_param("x") || t.has_param("nope"))
    throw std::logic_error("has_param(\"x\") or has_param(\"nope\") is wrong");
  // Typed parameters refuse a wrong type or a missing name, naming it (on every rank).
  for (const auto& [name, wanted] :
       {std::pair<const char*, const char*>{"x", "is a number, not a string"},
        {"nope", "has no parameter 'nope'"}}) {
    try {
      static_cast<void>(t.param<std::string>(name));
      throw std::logic_error(std::string("param<string>(\"") + name + "\") did not throw");
    } catch (const slurmtune::ClientError& e) {
      if (std::string(e.what()).find(wanted) == std::string::npos)
        throw std::logic_error(std::string("unexpected message: ") + e.what());
    }
  }
  const int steps = 9, start = first_step(t);
  for (int step = start; step <= steps; ++step) {
    const bool injected =
        static_cast<long>(t.id()) == kill_trial || static_cast<long>(t.id()) == hang_trial;
    if (injected && t.attempt() == 0 && step == 1) {
      // Deterministic whatever the scheduler decides: checkpoint step 1 collectively, then
      // rank 1 dies and the others wait in a barrier until the step is torn down.
      t.checkpoint(1, [&](slurmtune::CheckpointWriter& w) {
        w.write_sliced("weights", slice(t.rank(), 1));
        const double state[1] = {1};
        w.write_root("state", state);
      });
      if (static_cast<long>(t.id()) == hang_trial)
        for (;;)
          pause();
      if (t.rank() == 1) std::raise(SIGKILL);
      MPI_Barrier(t.comm());
    }
    if (sleep_ms > 0) usleep(static_cast<useconds_t>(sleep_ms) * 1000);
    double loss[1] = {(x - 0.3) * (x - 0.3) + 1.0 / step};
    slurmtune::dp::average(t, loss);
    const auto decision = t.report(step, {{"loss", loss[0]},
                                          {"ranks", static_cast<double>(t.size())},
                                          {"mixed", mixed ? 1.0 : 0.0},
                                          {"start", static_cast<double>(start)}});
    if (t.should_checkpoint()) {
      t.checkpoint(step, [&](slurmtune::CheckpointWriter& w) {
        w.write_sliced("weights", slice(t.rank(), step));
        const double state[1] = {static_cast<double>(step)};
        w.write_root("state", state);
      });
    }
    int mine = static_cast<int>(decision), low = 0, high = 0;
    MPI_Allreduce(&mine, &low, 1, MPI_INT, MPI_MIN, t.comm());
    MPI_Allreduce(&mine, &high, 1, MPI_INT, MPI_MAX, t.comm());
    if (low != high) throw std::logic_error("ranks received different decisions");
    if (decision != slurmtune::Decision::Continue) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--kill-trial=", 13) == 0)
      kill_trial = std::atol(argv[i] + 13);
    else if (std::strncmp(argv[i], "--hang-trial=", 13) == 0)
      hang_trial = std::atol(argv[i] + 13);
    else if (std::strncmp(argv[i], "--sleep-ms=", 11) == 0)
      sleep_ms = std::atoi(argv[i] + 11);
  return slurmtune::run_trials(argc, argv, train);
}
