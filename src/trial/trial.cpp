// run_trials and Trial: one MPI step split into per-trial groups that run trials back
// to back (include/slurmtune/trial.hpp).
#include "slurmtune/trial.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "client/typed_param.hpp"
#include "core/error.hpp"
#include "core/placement/hostlist.hpp"
#include "core/placement/partition.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/wire/json_value.hpp"
#include "trial/collectives.hpp"
#include "trial/communicator.hpp"
#include "trial/placement.hpp"

namespace slurmtune {
namespace {

using trial::broadcast_string;
using trial::Communicator;
using trial::mpi_check;
using trial::Wait;

// SLURMTUNE_TRIAL_SHAPE: "nodes:N", "ranks:R" or "gpus:G:GPUS_PER_NODE" (set by
// `slurmtune run` from [resources]); without it the whole step is one trial group.
core::TrialShape shape_from_environment(int world_size) {
  const char* text = std::getenv("SLURMTUNE_TRIAL_SHAPE");
  const std::string shape = text ? text : "";
  const auto number = [&](std::size_t at) { return std::atoi(shape.c_str() + at); };
  if (shape.starts_with("nodes:")) return {core::TrialShape::Kind::NodesPerTrial, number(6), 0};
  if (shape.starts_with("ranks:")) return {core::TrialShape::Kind::RanksPerTrial, number(6), 0};
  if (shape.starts_with("gpus:"))
    return {core::TrialShape::Kind::GpusPerTrial, number(5), number(shape.find(':', 5) + 1)};
  if (!shape.empty())
    throw InputError("SLURMTUNE_TRIAL_SHAPE='" + shape + "' is not nodes:N, ranks:R or gpus:G:N");
  return {core::TrialShape::Kind::RanksPerTrial, world_size, 0};
}

// Ranks other than 0 of a trial from Trial::from_environment: a first SIGTERM (srun
// signals every rank) waits for rank 0's decision at the next report, which ends the
// attempt after a checkpoint; a second one terminates. Only over the default action.
extern "C" void on_deferred_sigterm(int signal) {
  std::signal(signal, SIG_DFL);
}

void defer_sigterm() {
  struct sigaction current {};
  if (::sigaction(SIGTERM, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction action {};
  action.sa_handler = on_deferred_sigterm;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace

// ---- Trial ------------------------------------------------------------------

std::unique_ptr<Trial> Trial::from_environment(MPI_Comm comm) {
  const int rank = trial::rank_of(comm);
  std::unique_ptr<Client> leader;
  // One broadcast: "A" + the trial's description, "E" + why rank 0 could not connect, or
  // "L" + why it lost the coordinator.
  std::string message;
  if (rank == 0) {
    try {
      leader = std::make_unique<Client>(Client::from_environment());
      message = "A" + leader->assignment();
    } catch (const CoordinatorLost& e) {
      message = std::string("L") + e.what();
    } catch (const ClientError& e) {
      message = std::string("E") + e.what();
    }
  } else {
    defer_sigterm();
  }
  broadcast_string(message, comm);
  if (message.starts_with("L")) throw CoordinatorLost(message.substr(1));
  if (message.starts_with("E")) throw ClientError(message.substr(1));
  auto [local_rank, hosts] = trial::node_layout(comm);
  std::unique_ptr<Trial> trial(
      new Trial(comm, message.substr(1), leader.get(), local_rank, std::move(hosts)));
  trial->own_leader_ = std::move(leader);
  return trial;
}

Trial::Trial(MPI_Comm group, const std::string& assignment, Client* leader, int local_rank,
             std::vector<std::string> nodes)
    : local_rank_(local_rank), nodes_(std::move(nodes)), leader_(leader) {
  // Rank 0's client checked it when it came (WELCOME or ASSIGN) and encoded it again.
  const auto given = protocol::decode_trial_assignment(
      std::get<protocol::JsonObject>(protocol::parse_json(assignment).data), "ASSIGN");
  id_ = given.trial;
  attempt_ = given.attempt;
  dir_ = given.checkpoint_folder();
  resume_ = given.checkpoint;
  resume_step_ = given.checkpoint_step.value_or(std::nan(""));
  exceptions_at_start_ = std::uncaught_exceptions();
  params_ = std::make_shared<protocol::JsonObject>(given.params_object());
  comm_ = std::make_unique<Communicator>(Communicator::duplicate(group));
  rank_ = comm_->rank();
  size_ = comm_->size();
}

Trial::~Trial() {
  comm_.reset();
  if (!own_leader_) return;
  try {
    if (std::uncaught_exceptions() > exceptions_at_start_)
      own_leader_->finish(false, "the trial program left by an exception");
    else
      own_leader_->finish(true);
  } catch (const ClientError&) {
    // The coordinator is gone: nothing left to tell it.
  }
}

MPI_Comm Trial::comm() const {
  return comm_->get();
}

template <class T>
T Trial::param(const std::string& name) const {
  return typed_param<T, ClientError>(*static_cast<const protocol::JsonObject*>(params_.get()),
                                     name);
}
bool Trial::has_param(const std::string& name) const {
  return static_cast<const protocol::JsonObject*>(params_.get())->contains(name);
}

template double Trial::param<double>(const std::string&) const;
template std::int64_t Trial::param<std::int64_t>(const std::string&) const;
template bool Trial::param<bool>(const std::string&) const;
template std::string Trial::param<std::string>(const std::string&) const;

Decision Trial::report(double step, const std::map<std::string, double>& metrics) {
  // {decision, checkpoint, terminated}; decision -1: rank 0 lost the coordinator.
  int answer[3] = {0, 0, 0};
  std::string error;
  if (rank_ == 0) {
    try {
      answer[0] = static_cast<int>(leader_->report(step, metrics));
      answer[1] = leader_->should_checkpoint() ? 1 : 0;
      answer[2] = leader_->terminated() ? 1 : 0;
    } catch (const ClientError& e) {
      answer[0] = -1;
      error = e.what();
    }
  }
  mpi_check(MPI_Bcast(answer, 3, MPI_INT, 0, comm()), "MPI_Bcast");
  broadcast_string(error, comm());
  if (answer[0] < 0) throw CoordinatorLost("trial " + std::to_string(id_) + ": " + error);
  checkpoint_wanted_ = answer[1] != 0;
  terminated_ = answer[2] != 0;
  return static_cast<Decision>(answer[0]);
}

void Trial::heartbeat() {
  if (rank_ == 0) leader_->heartbeat();
}

void Trial::checkpoint_saved(double step, const std::string& path) {
  mpi_check(MPI_Barrier(comm()), "MPI_Barrier");  // every rank has written its part
  if (rank_ == 0) leader_->checkpoint_saved(step, path);
}

// ---- the group loop -----------------------------------------------------------

class TrialGroupRunner {
 public:
  TrialGroupRunner(Communicator group, int index, int local_rank, std::vector<std::string> hosts)
      : group_(std::move(group)),
        index_(index),
        local_rank_(local_rank),
        rank_(group_.rank()),
        size_(group_.size()),
        hosts_(std::move(hosts)) {}

  int run(const TrainFunction& train) {
    std::unique_ptr<Client> leader;
    int connected = 1;
    std::string error;
    if (rank_ == 0) {
      try {
        leader = std::make_unique<Client>(
            Client::for_group(index_, size_, core::compress_hostlist(unique(hosts_))));
      } catch (const ClientError& e) {
        connected = 0;
        error = e.what();
      }
    }
    try {
      mpi_check(MPI_Bcast(&connected, 1, MPI_INT, 0, group_.get()), "MPI_Bcast");
      if (!connected) return fail("trial group " + std::to_string(index_) + ": " + error);
      while (run_one(train, leader.get())) {
      }
    } catch (const ClientError& e) {  // the coordinator is lost, or an MPI call failed
      return fail("trial group " + std::to_string(index_) + ": " + e.what());
    }
    return 0;
  }

 private:
  static std::vector<std::string> unique(std::vector<std::string> hosts) {
    std::vector<std::string> out;
    for (auto& h : hosts)
      if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(std::move(h));
    return out;
  }

  int fail(const std::string& message) const {
    if (rank_ == 0) std::fprintf(stderr, "slurmtune: %s\n", message.c_str());
    return 1;
  }

  // One trial: rank 0 fetches the assignment, every rank trains, rank 0 reports the end.
  bool run_one(const TrainFunction& train, Client* leader) {
    // One broadcast carries what rank 0 learned: "A" + assignment, "D" (the study is
    // over) or "L" + why the coordinator is lost.
    std::string message;
    if (rank_ == 0) {
      try {
        message = leader->next_trial() ? "A" + leader->assignment() : "D";
      } catch (const ClientError& e) {
        message = std::string("L") + e.what();
      }
    }
    broadcast_string(message, group_.get(), Wait::Nap);
    if (message.starts_with("L")) throw CoordinatorLost(message.substr(1));
    if (message == "D") return false;  // the study is over
    const std::string assignment = message.substr(1);
    std::string error;
    {
      Trial trial(group_.get(), assignment, leader, local_rank_, hosts_);
      try {
        train(trial);
      } catch (const CoordinatorLost&) {
        throw;
      } catch (const std::exception& e) {
        error = "rank " + std::to_string(rank_) + ": " + e.what();
      }
    }
    // The trial failed if any rank failed; rank 0 tells the study why.
    int ok = error.empty() ? 1 : 0, all_ok = 0;
    mpi_check(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, group_.get()), "MPI_Allreduce");
    int first_failed = ok ? size_ : rank_, reporter = 0;
    mpi_check(MPI_Allreduce(&first_failed, &reporter, 1, MPI_INT, MPI_MIN, group_.get()),
              "MPI_Allreduce");
    if (!all_ok && reporter != 0) {
      if (rank_ == reporter)
        mpi_check(
            MPI_Send(error.data(), static_cast<int>(error.size()), MPI_CHAR, 0, 7, group_.get()),
            "MPI_Send");
      if (rank_ == 0) {
        MPI_Status status;
        mpi_check(MPI_Probe(reporter, 7, group_.get(), &status), "MPI_Probe");
        int n = 0;
        mpi_check(MPI_Get_count(&status, MPI_CHAR, &n), "MPI_Get_count");
        error.resize(static_cast<std::size_t>(n));
        mpi_check(MPI_Recv(error.data(), n, MPI_CHAR, reporter, 7, group_.get(), MPI_STATUS_IGNORE),
                  "MPI_Recv");
      }
    }
    // A failure to send this shows at the next NEXT, which every rank learns about.
    if (rank_ == 0) {
      try {
        leader->end_trial(all_ok != 0, error);
      } catch (const ClientError&) {
      }
    }
    return true;
  }

  Communicator group_;
  int index_, local_rank_, rank_ = 0, size_ = 1;
  std::vector<std::string> hosts_;  // host of each group rank
};

namespace {

// run_trials between MPI_Init and MPI_Finalize: placement, the split into groups, and
// this rank's group running trials. Throws Error (a bad trial shape) or ClientError (a
// failed MPI call on MPI_COMM_WORLD).
int run_groups(const TrainFunction& train) {
  const int world_rank = trial::rank_of(MPI_COMM_WORLD);
  const int world_size = trial::size_of(MPI_COMM_WORLD);
  const trial::RankLocation place = trial::query_placement(MPI_COMM_WORLD);
  int mine[2] = {place.node, place.local_rank};
  std::vector<int> all(2 * static_cast<std::size_t>(world_size));
  mpi_check(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD),
            "MPI_Allgather");
  const std::vector<std::string> hosts = trial::allgather_hosts(place.host, MPI_COMM_WORLD);

  std::vector<core::RankPlacement> placements;
  for (int r = 0; r < world_size; ++r)
    placements.push_back(
        {r, all[2 * static_cast<std::size_t>(r)], all[2 * static_cast<std::size_t>(r) + 1]});
  const core::Partition partition =
      core::partition_ranks(placements, shape_from_environment(world_size));
  if (world_rank == 0)
    std::fprintf(stderr, "slurmtune: %d rank(s), placement from %s: %s\n", world_size, place.source,
                 partition.summary().c_str());
  const int color = partition.color[static_cast<std::size_t>(world_rank)];
  Communicator group =
      Communicator::split(MPI_COMM_WORLD, color < 0 ? MPI_UNDEFINED : color, world_rank);
  if (group.empty()) return 0;  // a rank the shape leaves out
  const auto& members = partition.groups[static_cast<std::size_t>(color)];
  std::vector<std::string> group_hosts;
  int local_rank = 0;
  for (const int r : members) {
    group_hosts.push_back(hosts[static_cast<std::size_t>(r)]);
    if (r < world_rank && all[2 * static_cast<std::size_t>(r)] == place.node) ++local_rank;
  }
  return TrialGroupRunner(std::move(group), color, local_rank, std::move(group_hosts)).run(train);
}

}  // namespace

int run_trials(int argc, char** argv, const TrainFunction& train) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised && MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::fprintf(stderr, "slurmtune: MPI_Init failed\n");
    return 1;
  }
  int status = 1, rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);  // for the message; unchecked in an error path
  try {
    status = run_groups(train);
  } catch (const InputError& e) {  // the trial shape: every rank finds the same
    if (rank == 0) std::fprintf(stderr, "slurmtune: %s\n", e.what());
  } catch (const std::exception& e) {  // a failed MPI call: this rank says so
    std::fprintf(stderr, "slurmtune: rank %d: %s\n", rank, e.what());
  }
  if (!initialised) MPI_Finalize();
  return status;
}

}  // namespace slurmtune
