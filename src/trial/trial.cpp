// run_trials and Trial: one MPI step split into per-trial groups that run trials back
// to back (include/slurmtune/trial.hpp).
#include "slurmtune/trial.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "client/typed_param.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/placement/hostlist.hpp"
#include "core/placement/partition.hpp"
#include "trial/placement.hpp"

namespace slurmtune {
namespace {

constexpr int kHostChars = 256;

// MPI_Comm owner: freed exactly once.
class CommHandle {
 public:
  CommHandle() = default;
  explicit CommHandle(MPI_Comm comm) : comm_(comm) {}
  ~CommHandle() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  CommHandle(const CommHandle&) = delete;
  CommHandle& operator=(const CommHandle&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Completes `request` without holding a core. MPI_Bcast spins (Open MPI's default), and
// the ranks of a group waiting for their next assignment may wait long (no work yet);
// spinning there starves the group's rank 0 and the coordinator on a node whose every
// core is busy, and turned a 0.2 ms turnaround into one scheduler time slice (24 ms).
// Tested back to back for 100 us (an assignment usually comes within that), then with
// naps doubling from 20 us to 1 ms.
void wait_without_spinning(MPI_Request& request) {
  using namespace std::chrono_literals;
  const auto start = std::chrono::steady_clock::now();
  auto nap = std::chrono::microseconds(20);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (std::chrono::steady_clock::now() - start < 100us) continue;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
}

enum class Wait { Spin, Nap };

// One broadcast for the usual short text (length and bytes in one 4 KiB buffer), a
// second only for the rest of a longer one: trial turnaround is a handful of these.
void broadcast_string(std::string& text, MPI_Comm comm, Wait wait = Wait::Spin) {
  constexpr std::size_t kInline = 4096 - sizeof(int);
  char buffer[4096];
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int size = static_cast<int>(text.size());
  if (rank == 0) {
    std::memcpy(buffer, &size, sizeof size);
    std::memcpy(buffer + sizeof size, text.data(), std::min(text.size(), kInline));
  }
  if (wait == Wait::Nap) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibcast(buffer, sizeof buffer, MPI_CHAR, 0, comm, &request);
    wait_without_spinning(request);
  } else {
    MPI_Bcast(buffer, sizeof buffer, MPI_CHAR, 0, comm);
  }
  std::memcpy(&size, buffer, sizeof size);
  if (rank != 0)
    text.assign(buffer + sizeof size, std::min(static_cast<std::size_t>(size), kInline));
  if (static_cast<std::size_t>(size) <= kInline) return;
  text.resize(static_cast<std::size_t>(size));
  MPI_Bcast(text.data() + kInline, size - static_cast<int>(kInline), MPI_CHAR, 0, comm);
}

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

// Collective: the host of every rank of `comm`, in rank order, given this rank's.
std::vector<std::string> allgather_hosts(const std::string& mine, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  char host[kHostChars] = {};
  std::strncpy(host, mine.c_str(), kHostChars - 1);
  std::vector<char> all(kHostChars * static_cast<std::size_t>(size));
  MPI_Allgather(host, kHostChars, MPI_CHAR, all.data(), kHostChars, MPI_CHAR, comm);
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r)
    hosts.emplace_back(&all[kHostChars * static_cast<std::size_t>(r)]);
  return hosts;
}

// This rank's rank among the ranks of `comm` on its node, and the host of every rank.
std::pair<int, std::vector<std::string>> node_layout(MPI_Comm comm) {
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  const CommHandle owner(local);
  int local_rank = 0;
  MPI_Comm_rank(local, &local_rank);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  return {local_rank, allgather_hosts(host, comm)};
}

}  // namespace

// ---- Trial ------------------------------------------------------------------

std::unique_ptr<Trial> Trial::from_environment(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
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
  auto [local_rank, hosts] = node_layout(comm);
  std::unique_ptr<Trial> trial(
      new Trial(comm, message.substr(1), leader.get(), local_rank, std::move(hosts)));
  trial->own_leader_ = std::move(leader);
  return trial;
}

Trial::Trial(MPI_Comm group, const std::string& assignment, Client* leader, int local_rank,
             std::vector<std::string> nodes)
    : local_rank_(local_rank), nodes_(std::move(nodes)), leader_(leader) {
  const auto body = std::get<core::JsonObject>(core::parse_json(assignment).data);
  id_ = static_cast<std::uint64_t>(std::get<double>(body.at("trial").data));
  attempt_ = static_cast<std::uint64_t>(std::get<double>(body.at("attempt").data));
  dir_ = std::get<std::string>(body.at("trial_dir").data);
  if (const auto c = body.find("checkpoint"); c != body.end() && c->second.is_string())
    resume_ = std::get<std::string>(c->second.data);
  resume_step_ = std::nan("");
  if (const auto s = body.find("checkpoint_step"); s != body.end() && s->second.is_number())
    resume_step_ = std::get<double>(s->second.data);
  exceptions_at_start_ = std::uncaught_exceptions();
  auto params = std::make_shared<core::JsonObject>();
  if (const auto p = body.find("params"); p != body.end() && p->second.is_object())
    *params = std::get<core::JsonObject>(p->second.data);
  params_ = std::move(params);
  MPI_Comm_dup(group, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Trial::~Trial() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
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

template <class T>
T Trial::param(const std::string& name) const {
  return typed_param<T, ClientError>(*static_cast<const core::JsonObject*>(params_.get()), name);
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
  MPI_Bcast(answer, 3, MPI_INT, 0, comm_);
  broadcast_string(error, comm_);
  if (answer[0] < 0) throw CoordinatorLost("trial " + std::to_string(id_) + ": " + error);
  checkpoint_wanted_ = answer[1] != 0;
  terminated_ = answer[2] != 0;
  return static_cast<Decision>(answer[0]);
}

void Trial::heartbeat() {
  if (rank_ == 0) leader_->heartbeat();
}

void Trial::checkpoint_saved(double step, const std::string& path) {
  MPI_Barrier(comm_);  // every rank has written its part
  if (rank_ == 0) leader_->checkpoint_saved(step, path);
}

// ---- the group loop -----------------------------------------------------------

class TrialGroupRunner {
 public:
  TrialGroupRunner(MPI_Comm group, int index, int local_rank, std::vector<std::string> hosts)
      : group_(group), index_(index), local_rank_(local_rank), hosts_(std::move(hosts)) {
    MPI_Comm_rank(group_.get(), &rank_);
    MPI_Comm_size(group_.get(), &size_);
  }

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
    MPI_Bcast(&connected, 1, MPI_INT, 0, group_.get());
    if (!connected) return fail("trial group " + std::to_string(index_) + ": " + error);
    try {
      while (run_one(train, leader.get())) {
      }
    } catch (const CoordinatorLost& e) {
      return fail(e.what());
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
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, group_.get());
    int first_failed = ok ? size_ : rank_, reporter = 0;
    MPI_Allreduce(&first_failed, &reporter, 1, MPI_INT, MPI_MIN, group_.get());
    if (!all_ok && reporter != 0) {
      if (rank_ == reporter)
        MPI_Send(error.data(), static_cast<int>(error.size()), MPI_CHAR, 0, 7, group_.get());
      if (rank_ == 0) {
        MPI_Status status;
        MPI_Probe(reporter, 7, group_.get(), &status);
        int n = 0;
        MPI_Get_count(&status, MPI_CHAR, &n);
        error.resize(static_cast<std::size_t>(n));
        MPI_Recv(error.data(), n, MPI_CHAR, reporter, 7, group_.get(), MPI_STATUS_IGNORE);
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

  CommHandle group_;
  int index_, local_rank_, rank_ = 0, size_ = 1;
  std::vector<std::string> hosts_;  // host of each group rank
};

int run_trials(int argc, char** argv, const TrainFunction& train) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(&argc, &argv);
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);

  const trial::RankPlace place = trial::query_placement(MPI_COMM_WORLD);
  int mine[2] = {place.node, place.local_rank};
  std::vector<int> all(2 * static_cast<std::size_t>(world_size));
  MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD);
  const std::vector<std::string> hosts = allgather_hosts(place.host, MPI_COMM_WORLD);

  std::vector<core::RankPlacement> placements;
  for (int r = 0; r < world_size; ++r)
    placements.push_back(
        {r, all[2 * static_cast<std::size_t>(r)], all[2 * static_cast<std::size_t>(r) + 1]});
  int status = 0;
  core::Partition partition;
  try {
    partition = core::partition_ranks(placements, shape_from_environment(world_size));
  } catch (const Error& e) {
    if (world_rank == 0) std::fprintf(stderr, "slurmtune: %s\n", e.what());
    if (!initialised) MPI_Finalize();
    return 1;
  }
  if (world_rank == 0)
    std::fprintf(stderr, "slurmtune: %d rank(s), placement from %s: %s\n", world_size, place.source,
                 partition.summary().c_str());
  const int color = partition.color[static_cast<std::size_t>(world_rank)];
  MPI_Comm group = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, color < 0 ? MPI_UNDEFINED : color, world_rank, &group);
  if (group != MPI_COMM_NULL) {
    const auto& members = partition.groups[static_cast<std::size_t>(color)];
    std::vector<std::string> group_hosts;
    int local_rank = 0;
    for (const int r : members) {
      group_hosts.push_back(hosts[static_cast<std::size_t>(r)]);
      if (r < world_rank && all[2 * static_cast<std::size_t>(r)] == place.node) ++local_rank;
    }
    status = TrialGroupRunner(group, color, local_rank, std::move(group_hosts)).run(train);
  }
  if (!initialised) MPI_Finalize();
  return status;
}

}  // namespace slurmtune
