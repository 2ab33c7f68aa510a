"""Reports from every rank of a distributed trial (torch.distributed or mpi4py).

Every rank calls ``report``; rank 0 talks to the coordinator (``slurmtune.client``) and
the decision reaches the other ranks by a broadcast over the trial's communicator, so
every rank gets the same answer and leaves the training loop at the same step: none is
left waiting in the next all-reduce::

    import torch.distributed as dist
    from slurmtune.distributed import DistributedClient, TrialStopped

    dist.init_process_group("gloo")    # env://: slurmtune set MASTER_ADDR, MASTER_PORT,
                                       # WORLD_SIZE and each rank's RANK
    client = DistributedClient.torch() # or DistributedClient.mpi(MPI.COMM_WORLD)
    for epoch in range(start, epochs + 1):
        loss = train_one_epoch()       # the same value on every rank (all-reduced)
        try:
            client.report(step=epoch, val_loss=loss)
        except TrialStopped as stopped:  # on every rank, at the same step
            if stopped.checkpoint:
                client.save_checkpoint(epoch, "model.pt", lambda path: torch.save(state, path))
            raise

``report`` returns "continue" or raises ``TrialStopped`` (``TrialTerminated`` after a
SIGTERM) exactly as ``slurmtune.client.report`` does on a single process. A SIGTERM
(``scancel``, preemption) reaches every rank: ranks other than 0 note it and carry on to
the next report, where rank 0's decision (a checkpoint, then exit) reaches them all.
The torch backend may be any (gloo, nccl: objects are broadcast with
``broadcast_object_list``); the variables are in doc/protocol.md#rendezvous.
"""

import os
import signal

from slurmtune import client
from slurmtune.client import TrialStopped, TrialTerminated

__all__ = ["DistributedClient", "TrialStopped", "TrialTerminated"]


class DistributedClient:
    """A report client for all ranks of one trial. ``broadcast(obj)`` returns rank 0's
    ``obj`` on every rank of the trial; ``rank`` is this process's rank in it."""

    def __init__(self, broadcast, rank):
        self._broadcast = broadcast
        self.rank = rank
        self._checkpoint_wanted = False
        if rank != 0:
            _defer_sigterm()

    @classmethod
    def torch(cls, group=None):
        """Over a torch.distributed process group (default: the whole world); the process
        group must be initialised."""
        import torch.distributed as dist

        def broadcast(obj):
            box = [obj]
            dist.broadcast_object_list(box, src=_global_rank_of_root(dist, group), group=group)
            return box[0]

        return cls(broadcast, dist.get_rank(group))

    @classmethod
    def mpi(cls, comm):
        """Over an mpi4py communicator (for example ``MPI.COMM_WORLD``)."""
        return cls(lambda obj: comm.bcast(obj, root=0), comm.Get_rank())

    def report(self, step, **metrics):
        outcome = None
        if self.rank == 0:
            try:
                client.report(step, **metrics)
                outcome = ("continue", client.should_checkpoint())
            except TrialTerminated:
                outcome = ("terminated", True)
            except TrialStopped as stopped:
                outcome = (stopped.decision, stopped.checkpoint)
        decision, self._checkpoint_wanted = self._broadcast(outcome)
        if decision == "continue":
            return decision
        if decision == "terminated":
            raise TrialTerminated(step)
        raise TrialStopped(decision, step, self._checkpoint_wanted)

    def should_checkpoint(self):
        """The last decision asked for a checkpoint (the same on every rank)."""
        return self._checkpoint_wanted

    def save_checkpoint(self, step, name, write):
        """Rank 0 calls ``write(path)`` on a temporary file, renames it onto ``name`` in
        the trial's folder and indexes it; every rank returns the path once it is written,
        or raises the same error when rank 0 could not write it."""
        return save_on_rank_zero(self.rank, self._broadcast, os.path.join(client.checkpoint_dir(), name),
                                 write, lambda path: client.checkpoint_saved(step, path))

    def heartbeat(self):
        if self.rank == 0:
            client.heartbeat()

    @staticmethod
    def resume_checkpoint():
        """The checkpoint to resume from, or None (the same on every rank)."""
        return client.resume_checkpoint()

    @staticmethod
    def resume_step():
        return client.resume_step()

    @staticmethod
    def params():
        return client.params()


def save_on_rank_zero(rank, broadcast, path, write, index):
    """Rank 0 calls ``write`` on a temporary path beside ``path`` (the same extension,
    so that writers which add one, as numpy's savez does, keep the name), renames the
    result onto ``path`` and calls ``index(path)``: the checkpoint is whole or absent,
    whenever the trial is killed. Every rank returns ``path``, or raises the same
    RuntimeError when rank 0 failed (the others would otherwise wait in the broadcast for
    ever). ``broadcast(obj)`` gives rank 0's ``obj`` on every rank."""
    error = None
    if rank == 0:
        try:
            root, extension = os.path.splitext(path)
            partial = root + ".partial" + extension
            write(partial)
            os.replace(partial, path)
            index(path)
        except Exception as e:  # every rank must learn it
            error = "%s: %s" % (type(e).__name__, e)
    error = broadcast(error)
    if error:
        raise RuntimeError("saving %s failed on rank 0: %s" % (path, error))
    return path


def _global_rank_of_root(dist, group):
    if group is None:
        return 0
    get = getattr(dist, "get_global_rank", None) or dist.distributed_c10d._get_global_rank
    return get(group, 0)


def _defer_sigterm():
    """Ranks other than 0: a first SIGTERM waits for rank 0's decision at the next report
    (which ends the attempt after a checkpoint); a second one terminates at once."""
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return

        def noted(signum, frame):
            signal.signal(signum, signal.SIG_DFL)

        signal.signal(signal.SIGTERM, noted)
    except ValueError:  # not the main thread: leave signals alone
        pass
