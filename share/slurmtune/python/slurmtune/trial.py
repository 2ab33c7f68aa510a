"""Python trial groups: ``[trial] mode = "mpi"`` with a Python program (mpi4py).

``slurmtune run`` starts the program once, as one MPI step over the allocation (srun,
or mpirun on a workstation). ``run_trials`` splits the step's ranks into per-trial
groups (the same partition as the C++ ``slurmtune::run_trials``; slurmtune.partition)
and each group runs trial after trial without a new launch::

    from slurmtune.trial import run_trials

    def train(t):
        model = build(t.params["lr"])
        start = 1
        if t.resume_checkpoint:              # a retry, a promotion, a resumed study
            start = load(model, t.resume_checkpoint) + 1
        for epoch in range(start, 28):
            loss = train_one_epoch(model, t.comm)   # t.comm: this trial's ranks only
            try:
                t.report(epoch, val_loss=loss)      # every rank; rank 0 sends
            except TrialStopped as stopped:         # on every rank, at the same step
                if stopped.checkpoint:
                    t.save_checkpoint(epoch, "model.pt", lambda path: save(model, path))
                raise

    if __name__ == "__main__":
        raise SystemExit(run_trials(train))

A trial ends when ``train`` returns or raises ``TrialStopped``; any other exception
fails it (retried per the study's max_failures) and the group goes on. It must be raised
on every rank of the trial (after a collective, as ``report`` does), or the others wait.
``t.torch_process_group(backend)`` gives a ``torch.distributed`` process group of the
trial's ranks only. The group protocol is doc/protocol.md#trial-groups-trial-mode--mpi.
"""

import datetime
import os
import pickle
import struct
import sys
import time
import traceback

from slurmtune import client
from slurmtune.client import ClientError, CoordinatorLost, TrialStopped
from slurmtune.distributed import save_on_rank_zero
from slurmtune.partition import PartitionError, partition_ranks, shape_from_environment

__all__ = ["run_trials", "Trial", "TrialStopped", "ClientError", "CoordinatorLost"]


class _GroupLeader(client.Connection):
    """The connection of a group's rank 0: HELLO as group ``index``, then NEXT / ASSIGN /
    TRIAL_END per trial, with REPORT, CHECKPOINT and HEARTBEAT in between."""

    def __init__(self, index, ranks, nodes):
        super().__init__({"group": index, "ranks": ranks, "nodes": nodes,
                          "step": int(os.environ.get("SLURMTUNE_STEP", "0"))})

    def next_trial(self):
        """The next assignment, or None when the study is over (blocks until one comes)."""
        assignment = self.exchange(client._NEXT, {}, client._ASSIGN)
        return None if client.parse_assignment(assignment, "ASSIGN") is None else assignment

    def report(self, step, metrics):
        return client.parse_decision(
            self.exchange(client._REPORT, client.metrics_body(step, metrics), client._DECISION))

    def heartbeat(self):
        self.send(client._HEARTBEAT, {})

    def end_trial(self, ok, error):
        self.send(client._TRIAL_END, client.ending_payload(ok, error))


class Trial:
    """One trial on one group's ranks. ``comm`` is the trial's own mpi4py communicator (a
    duplicate made for this trial, freed when it ends); ``rank``/``size`` are within it,
    ``local_rank`` among its ranks on the same node (GPU pinning), ``nodes`` the host of
    each rank. ``params``, ``trial_dir``, ``checkpoint_dir``, ``resume_checkpoint`` and
    ``resume_step`` are the same on every rank."""

    def __init__(self, group, assignment, leader, local_rank, nodes):
        self.comm = group.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.local_rank = local_rank
        self.nodes = nodes
        (self.id, self.attempt, self.params, self.trial_dir, self.resume_checkpoint,
         self.resume_step) = client.parse_assignment(assignment, "ASSIGN")
        self.checkpoint_dir = client.assigned_checkpoint_dir(assignment)
        self._leader = leader  # rank 0 only
        self._checkpoint_wanted = False
        self._torch_group = None

    def report(self, step, **metrics):
        """Collective: rank 0 reports ``metrics`` (pass the same values on every rank, e.g.
        after an allreduce) and every rank gets the same answer: "continue", or
        ``TrialStopped`` raised on every rank (``checkpoint`` says whether to save one)."""
        outcome = None
        if self.rank == 0:
            try:
                outcome = self._leader.report(step, metrics)
            except ClientError as e:
                outcome = ("lost", str(e))
        decision, detail = self.comm.bcast(outcome, root=0)
        if decision == "lost":
            raise CoordinatorLost("trial %d: %s" % (self.id, detail))
        self._checkpoint_wanted = detail
        if decision != "continue":
            raise TrialStopped(decision, step, detail)
        return decision

    def should_checkpoint(self):
        """The last decision asked for a checkpoint (the same on every rank)."""
        return self._checkpoint_wanted

    def heartbeat(self):
        """"Still alive" in a long step ([trial] report_timeout_s): rank 0 sends it."""
        if self.rank == 0:
            self._leader.heartbeat()

    def checkpoint_path(self, name):
        """``name`` inside the trial's checkpoint folder (``checkpoint_dir``: its folder in
        [checkpoints] folder, else ``trial_dir``)."""
        return os.path.join(self.checkpoint_dir, name)

    def checkpoint_saved(self, step, path):
        """Collective: every rank has written its part of ``path``; rank 0 indexes it."""
        self.comm.Barrier()
        if self.rank == 0:
            self._leader.index_checkpoint(step, path)

    def save_checkpoint(self, step, name, write):
        """Collective: rank 0 calls ``write(path)`` on a temporary file, renames it onto
        ``name`` in the trial's folder and indexes it; every rank returns the path once it
        is written."""
        return save_on_rank_zero(self.rank, lambda obj: self.comm.bcast(obj, root=0),
                                 self.checkpoint_path(name), write,
                                 lambda path: self._leader.index_checkpoint(step, path))

    def torch_process_group(self, backend="gloo", timeout_s=300):
        """A ``torch.distributed`` process group of this trial's ranks only, made once
        per trial and destroyed when it ends: rank 0 opens a TCPStore on a free port of
        its node and every rank joins it; with "nccl" each rank takes GPU
        ``local_rank`` (modulo the GPUs it sees)."""
        if self._torch_group is not None:
            return self._torch_group
        import torch
        import torch.distributed as dist

        if dist.is_initialized():
            raise ClientError("torch.distributed is already initialised in this process; "
                              "a trial group's ranks join the trial's own process group")
        timeout = datetime.timedelta(seconds=timeout_s)
        store, where = None, None
        if self.rank == 0:
            # The store listens on every interface; the others reach it at the address
            # rank 0 reaches the coordinator from (node names need not resolve).
            # wait_for_workers=False: they learn the port only after this returns.
            try:
                store = dist.TCPStore("0.0.0.0", 0, self.size, True, timeout, wait_for_workers=False)
                where = (self._leader.local_address(), store.port)
            except Exception as e:
                where = ("error", str(e))
        host, port = self.comm.bcast(where, root=0)
        if host == "error":
            raise ClientError("trial %d: rank 0 could not open the torch TCPStore: %s" % (self.id, port))
        if store is None:
            store = dist.TCPStore(host, port, self.size, False, timeout)
        if backend == "nccl" and torch.cuda.is_available():
            torch.cuda.set_device(self.local_rank % torch.cuda.device_count())
        dist.init_process_group(backend, store=store, rank=self.rank, world_size=self.size,
                                timeout=timeout)
        self._torch_group = dist.group.WORLD
        return self._torch_group

    def _close(self):
        if self._torch_group is not None:
            import torch.distributed as dist

            dist.destroy_process_group()
            self._torch_group = None
        self.comm.Free()


class _GroupRunner:
    """One group's loop: rank 0 fetches each assignment and broadcasts it, every rank
    trains, rank 0 tells the study how the trial ended."""

    def __init__(self, group, index, local_rank, hosts):
        self.group, self.index, self.local_rank, self.hosts = group, index, local_rank, hosts
        self.rank, self.size = group.Get_rank(), group.Get_size()

    def run(self, train):
        leader, error = None, None
        if self.rank == 0:
            try:
                nodes = ",".join(dict.fromkeys(self.hosts))
                leader = _GroupLeader(self.index, self.size, nodes)
            except ClientError as e:
                error = str(e)
        error = self.group.bcast(error, root=0)
        if error:
            return self._fail("trial group %d: %s" % (self.index, error))
        try:
            while self._run_one(train, leader):
                pass
        except CoordinatorLost as e:
            return self._fail(str(e))
        return 0

    def _fail(self, message):
        if self.rank == 0:
            print("slurmtune: %s" % message, file=sys.stderr, flush=True)
        return 1

    def _run_one(self, train, leader):
        message = None
        if self.rank == 0:
            try:
                message = ("assign", leader.next_trial())
            except ClientError as e:
                message = ("lost", str(e))
        kind, body = _bcast_without_spinning(self.group, message)
        if kind == "lost":
            raise CoordinatorLost(body)
        if body is None:
            return False  # the study is over
        trial = Trial(self.group, body, leader, self.local_rank, self.hosts)
        error = ""
        try:
            train(trial)
        except TrialStopped:
            pass  # the study's decision: the trial ran its course
        except CoordinatorLost:
            raise
        except Exception as e:
            error = "rank %d: %s: %s" % (self.rank, type(e).__name__, e)
            traceback.print_exc()
        finally:
            trial._close()
        # The trial failed if any rank failed; rank 0 tells the study the first reason.
        errors = self.group.gather(error, root=0)
        if self.rank == 0:
            first = next((e for e in errors if e), "")
            try:
                leader.end_trial(not first, first)
            except ClientError:
                pass  # shows at the next NEXT, which every rank learns about
        return True


_INLINE = 4096 - 4


def _bcast_without_spinning(comm, obj):
    """Rank 0's ``obj`` on every rank, waiting without holding a core: a group's ranks
    may wait long for their next assignment, and ranks spinning in a broadcast starve
    rank 0 and the coordinator on a node whose every core is busy (C++:
    wait_without_spinning). Length and the first 4 KiB in one Ibcast, tested back to
    back for 100 us, then with naps doubling from 20 us to 1 ms; the rest, if any, by a
    plain Bcast."""
    from mpi4py import MPI

    buffer = bytearray(4096)
    payload = b""
    if comm.Get_rank() == 0:
        payload = pickle.dumps(obj)
        buffer[:4] = struct.pack("<I", len(payload))
        buffer[4:4 + min(len(payload), _INLINE)] = payload[:_INLINE]
    request = comm.Ibcast([buffer, MPI.BYTE], root=0)
    start, nap = time.monotonic(), 20e-6
    while not request.Test():
        if time.monotonic() - start >= 100e-6:
            time.sleep(nap)
            nap = min(nap * 2, 1e-3)
    size = struct.unpack("<I", bytes(buffer[:4]))[0]
    if size > _INLINE:
        rest = bytearray(payload[_INLINE:]) if comm.Get_rank() == 0 else bytearray(size - _INLINE)
        comm.Bcast([rest, MPI.BYTE], root=0)
    if comm.Get_rank() == 0:
        return obj
    data = bytes(buffer[4:4 + min(size, _INLINE)]) + (bytes(rest) if size > _INLINE else b"")
    return pickle.loads(data)


def _placement(world):
    """(node index, local rank, host, source) of this rank. Inside a Slurm step, from
    Slurm (SLURM_NODEID, SLURM_LOCALID, SLURMD_NODENAME: what PMIx gives the C++ groups);
    otherwise (mpirun, or SLURMTUNE_PLACEMENT=mpi) the ranks sharing memory are a node,
    numbered in the order of their first world rank. Every rank takes the same path."""
    from mpi4py import MPI

    env = os.environ
    from_slurm = (env.get("SLURMTUNE_PLACEMENT") != "mpi"
                  and env.get("SLURM_PROCID") == str(world.Get_rank())
                  and env.get("SLURM_STEP_NUM_TASKS") == str(world.Get_size())
                  and env.get("SLURM_NODEID", "").isdigit() and env.get("SLURM_LOCALID", "").isdigit())
    if world.allreduce(int(from_slurm), op=MPI.MIN):
        return (int(env["SLURM_NODEID"]), int(env["SLURM_LOCALID"]),
                env.get("SLURMD_NODENAME") or MPI.Get_processor_name(), "slurm")
    local = world.Split_type(MPI.COMM_TYPE_SHARED, 0)
    local_rank = local.Get_rank()
    leaders = world.Split(0 if local_rank == 0 else MPI.UNDEFINED, world.Get_rank())
    node = 0
    if leaders != MPI.COMM_NULL:
        node = leaders.Get_rank()
        leaders.Free()
    node = local.bcast(node, root=0)
    local.Free()
    return node, local_rank, MPI.Get_processor_name(), "mpi-shared"


def run_trials(train, comm=None):
    """Runs trials until the study is over; returns the process's exit status. ``comm``:
    the step's ranks (default ``MPI.COMM_WORLD``)."""
    from mpi4py import MPI

    world = comm if comm is not None else MPI.COMM_WORLD
    world_rank, world_size = world.Get_rank(), world.Get_size()
    node, local_rank, host, source = _placement(world)
    everyone = world.allgather((node, local_rank, host))
    try:
        partition = partition_ranks([(r, n, lr) for r, (n, lr, _) in enumerate(everyone)],
                                    shape_from_environment(world_size, os.environ))
    except PartitionError as e:
        if world_rank == 0:
            print("slurmtune: %s" % e, file=sys.stderr, flush=True)
        return 1
    if world_rank == 0:
        print("slurmtune: %d rank(s), placement from %s: %s"
              % (world_size, source, partition.summary()), file=sys.stderr, flush=True)
    color = partition.color[world_rank]
    group = world.Split(color if color >= 0 else MPI.UNDEFINED, world_rank)
    if group == MPI.COMM_NULL:
        return 0
    members = partition.groups[color]
    hosts = [everyone[r][2] for r in members]
    group_local_rank = sum(1 for r in members if r < world_rank and everyone[r][0] == node)
    try:
        return _GroupRunner(group, color, group_local_rank, hosts).run(train)
    finally:
        group.Free()
