// The trial API's MPI layer under `mpirun -np 4` (tests/CMakeLists.txt): every rank runs
// these cases, and mpirun fails when any rank fails. What is checked: the communicator
// owner (errors returned, freed once), a failed MPI call turning into the same
// ClientError on every rank, the broadcast of short and long texts in both waiting
// modes, hosts and node-local ranks, placement without PMIx, and run_trials without a
// coordinator ending on every rank with a message instead of an abort or a hang.
#define BOOST_TEST_MODULE trial_mpi
#include <mpi.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <set>
#include <string>

#include "slurmtune/trial.hpp"
#include "trial/collectives.hpp"
#include "trial/communicator.hpp"
#include "trial/placement.hpp"

using namespace slurmtune;
using namespace slurmtune::trial;

namespace {

struct MpiSession {
  MpiSession() {
    auto& master = boost::unit_test::framework::master_test_suite();
    MPI_Init(&master.argc, &master.argv);
  }
  ~MpiSession() { MPI_Finalize(); }
};
BOOST_TEST_GLOBAL_FIXTURE(MpiSession);

int world_rank() {
  return rank_of(MPI_COMM_WORLD);
}
int world_size() {
  return size_of(MPI_COMM_WORLD);
}

// 1 on every rank when `mine` is 1 on every rank.
int everywhere(int mine) {
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

}  // namespace

BOOST_AUTO_TEST_CASE(runs_on_four_ranks) {
  BOOST_TEST(world_size() == 4);
}

BOOST_AUTO_TEST_CASE(a_duplicate_returns_errors_and_is_freed_once) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  BOOST_TEST(comm.rank() == world_rank());
  BOOST_TEST(comm.size() == world_size());
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  BOOST_REQUIRE(MPI_Comm_get_errhandler(comm.get(), &handler) == MPI_SUCCESS);
  BOOST_TEST((handler == MPI_ERRORS_RETURN));
  MPI_Errhandler_free(&handler);
  int same = MPI_UNEQUAL;
  MPI_Comm_compare(comm.get(), MPI_COMM_WORLD, &same);
  BOOST_TEST(same == MPI_CONGRUENT);  // a private copy, not the world itself

  Communicator moved = std::move(comm);
  BOOST_TEST(comm.empty());  // NOLINT(bugprone-use-after-move): checking the move
  BOOST_TEST(!moved.empty());
  moved = Communicator::split(MPI_COMM_WORLD, world_rank() % 2, world_rank());
  BOOST_TEST(moved.size() == 2);
  BOOST_TEST(moved.rank() == world_rank() / 2);
  const Communicator none = Communicator::split(MPI_COMM_WORLD, MPI_UNDEFINED, 0);
  BOOST_TEST(none.empty());
}

BOOST_AUTO_TEST_CASE(a_failed_call_is_the_same_client_error_on_every_rank) {
  const Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  int value = 7;
  std::string what;
  try {
    // A root outside the communicator: every rank's argument check fails alike, and the
    // communicator returns the error instead of aborting the job.
    mpi_check(MPI_Bcast(&value, 1, MPI_INT, comm.size() + 3, comm.get()), "MPI_Bcast");
  } catch (const ClientError& e) {
    what = e.what();
  }
  BOOST_TEST(what.rfind("MPI_Bcast failed: ", 0) == 0, what);
  BOOST_TEST(what.size() > std::string("MPI_Bcast failed: ").size());
  BOOST_TEST(everywhere(what.empty() ? 0 : 1) == 1);
  // The communicator still works after the refused call.
  int sum = 0;
  mpi_check(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm.get()), "MPI_Allreduce");
  BOOST_TEST(sum == 7 * world_size());
  BOOST_CHECK_THROW(mpi_check(MPI_ERR_COMM, "MPI_Barrier"), ClientError);
  BOOST_CHECK_NO_THROW(mpi_check(MPI_SUCCESS, "MPI_Barrier"));
}

BOOST_AUTO_TEST_CASE(texts_of_every_length_reach_every_rank) {
  const Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  for (const std::size_t length : {std::size_t{0}, std::size_t{17}, std::size_t{4092},
                                   std::size_t{4093}, std::size_t{100000}}) {
    for (const Wait wait : {Wait::Spin, Wait::Nap}) {
      std::string expected(length, 'x');
      for (std::size_t i = 0; i < length; ++i)
        expected[i] = static_cast<char>('a' + i % 26);
      std::string text = comm.rank() == 0 ? expected : "stale text of another trial";
      broadcast_string(text, comm.get(), wait);
      BOOST_TEST(everywhere(text == expected ? 1 : 0) == 1, "length " << length);
    }
  }
}

BOOST_AUTO_TEST_CASE(hosts_and_node_local_ranks) {
  const Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const auto hosts = allgather_hosts("host-" + std::to_string(comm.rank()), comm.get());
  BOOST_REQUIRE(hosts.size() == 4U);
  BOOST_TEST(hosts[3] == "host-3");
  const auto [local_rank, real_hosts] = node_layout(comm.get());
  BOOST_TEST(local_rank == comm.rank());  // mpirun on one machine: one node
  BOOST_TEST(std::set<std::string>(real_hosts.begin(), real_hosts.end()).size() == 1U);
}

BOOST_AUTO_TEST_CASE(placement_without_pmix_numbers_one_node) {
  ::setenv("SLURMTUNE_PLACEMENT", "mpi", 1);
  const RankLocation place = query_placement(MPI_COMM_WORLD);
  BOOST_TEST(place.node == 0);
  BOOST_TEST(place.local_rank == world_rank());
  BOOST_TEST(std::string(place.source) == "mpi-shared");
  ::unsetenv("SLURMTUNE_PLACEMENT");
}

BOOST_AUTO_TEST_CASE(run_trials_without_a_coordinator_fails_on_every_rank) {
  // Two groups of two ranks; neither rank 0 can connect (no SLURMTUNE_ADDR), each says
  // so and the group's ranks all return 1: no hang, no abort.
  ::unsetenv("SLURMTUNE_ADDR");
  ::setenv("SLURMTUNE_TRIAL_SHAPE", "ranks:2", 1);
  ::setenv("SLURMTUNE_PLACEMENT", "mpi", 1);
  bool trained = false;
  char name[] = "test_trial_mpi";
  char* argv[] = {name, nullptr};
  const int status = run_trials(1, argv, [&trained](Trial&) { trained = true; });
  BOOST_TEST(status == 1);
  BOOST_TEST(!trained);
  BOOST_TEST(everywhere(status == 1 ? 1 : 0) == 1);
  ::unsetenv("SLURMTUNE_TRIAL_SHAPE");
  ::unsetenv("SLURMTUNE_PLACEMENT");
}

BOOST_AUTO_TEST_CASE(a_bad_trial_shape_is_refused_on_every_rank) {
  ::setenv("SLURMTUNE_TRIAL_SHAPE", "ranks:5", 1);  // 4 ranks cannot make a group of 5
  ::setenv("SLURMTUNE_PLACEMENT", "mpi", 1);
  char name[] = "test_trial_mpi";
  char* argv[] = {name, nullptr};
  const int status = run_trials(1, argv, [](Trial&) {});
  BOOST_TEST(everywhere(status == 1 ? 1 : 0) == 1);
  ::unsetenv("SLURMTUNE_TRIAL_SHAPE");
  ::unsetenv("SLURMTUNE_PLACEMENT");
}
