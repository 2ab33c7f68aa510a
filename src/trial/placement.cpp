#include "trial/placement.hpp"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>

#include "trial/communicator.hpp"

#ifdef SLURMTUNE_HAVE_PMIX
#include <pmix.h>
#endif

namespace slurmtune::trial {
namespace {

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

#ifdef SLURMTUNE_HAVE_PMIX
// A value PMIx_Get allocated, released exactly once.
struct PmixValueRelease {
  void operator()(pmix_value_t* value) const { PMIX_VALUE_RELEASE(value); }
};
using PmixValue = std::unique_ptr<pmix_value_t, PmixValueRelease>;

// PMIx_Init/PMIx_Finalize paired; under Open MPI this returns MPI's own PMIx client.
class PmixSession {
 public:
  PmixSession() { ok_ = PMIx_Init(&self_, nullptr, 0) == PMIX_SUCCESS; }
  ~PmixSession() {
    if (ok_) PMIx_Finalize(nullptr, 0);
  }
  PmixSession(const PmixSession&) = delete;
  PmixSession& operator=(const PmixSession&) = delete;
  bool ok() const { return ok_; }

  // One key of this process (then of the job, for node-level keys), or null.
  PmixValue get(const char* key) {
    pmix_info_t optional;
    bool yes = true;
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_value_t* value = nullptr;
    if (PMIx_Get(&self_, key, &optional, 1, &value) == PMIX_SUCCESS && value)
      return PmixValue(value);
    pmix_proc_t job = self_;
    job.rank = PMIX_RANK_WILDCARD;
    if (PMIx_Get(&job, key, &optional, 1, &value) == PMIX_SUCCESS && value) return PmixValue(value);
    return nullptr;
  }

 private:
  pmix_proc_t self_{};
  bool ok_ = false;
};

std::optional<RankLocation> from_pmix() {
  PmixSession pmix;
  if (!pmix.ok()) return std::nullopt;
  const PmixValue node = pmix.get(PMIX_NODEID);
  const PmixValue local = pmix.get(PMIX_LOCAL_RANK);
  if (!node || !local) return std::nullopt;
  RankLocation place;
  place.node = static_cast<int>(node->data.uint32);
  place.local_rank = static_cast<int>(local->data.uint16);
  place.host = host_name();
  if (const PmixValue host = pmix.get(PMIX_HOSTNAME);
      host && host->type == PMIX_STRING && host->data.string)
    place.host = host->data.string;
  place.source = "pmix";
  return place;
}
#endif

RankLocation from_shared_memory(MPI_Comm world) {
  RankLocation place;
  const Communicator local = Communicator::node_local(world);
  place.local_rank = local.rank();
  // The first rank of each node numbers the nodes; the others learn it from it.
  const Communicator leaders =
      Communicator::split(world, place.local_rank == 0 ? 0 : MPI_UNDEFINED, rank_of(world));
  if (!leaders.empty()) place.node = leaders.rank();
  mpi_check(MPI_Bcast(&place.node, 1, MPI_INT, 0, local.get()), "MPI_Bcast");
  place.host = host_name();
  place.source = "mpi-shared";
  return place;
}

}  // namespace

RankLocation query_placement(MPI_Comm world) {
  std::optional<RankLocation> place;
#ifdef SLURMTUNE_HAVE_PMIX
  // SLURMTUNE_PLACEMENT=mpi skips PMIx (a launcher whose PMIx keys are wrong; tests).
  const char* choice = std::getenv("SLURMTUNE_PLACEMENT");
  if (!choice || std::string(choice) != "mpi") place = from_pmix();
#endif
  // Every rank must take the same path: the fallback is collective.
  int have = place ? 1 : 0, all = 0;
  mpi_check(MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, world), "MPI_Allreduce");
  if (all) return *place;
  return from_shared_memory(world);
}

}  // namespace slurmtune::trial
