"""Splitting one MPI step's ranks into per-trial groups, for Python trial groups
(slurmtune.trial). The same rules, and the same groups for the same inputs, as the C++
``core::partition_ranks`` (src/core/placement/partition.cpp) that C++ trial groups use;
tests/python/peers/check_partition.py compares the two on random placements:

- a group never straddles nodes unless one trial needs more than a node holds; then it
  takes whole nodes (and the unused tail of its last node stays idle);
- a trial smaller than a node packs several groups onto that node;
- ranks that complete no group are idle (reported, never given work).
"""

__all__ = ["PartitionError", "TrialShape", "Partition", "partition_ranks", "shape_from_environment"]


class PartitionError(ValueError):
    """Inconsistent placements, a malformed shape, or not even one group fits."""


class TrialShape:
    """How big one trial is: ``kind`` "nodes", "ranks" or "gpus" (one rank per GPU,
    ``gpus_per_node`` on each node) and ``count``."""

    def __init__(self, kind, count, gpus_per_node=0):
        self.kind, self.count, self.gpus_per_node = kind, count, gpus_per_node

    def __str__(self):
        if self.kind == "nodes":
            return "%d node(s) per trial" % self.count
        if self.kind == "ranks":
            return "%d rank(s) per trial" % self.count
        return "%d GPU(s) per trial (%d per node)" % (self.count, self.gpus_per_node)


def shape_from_environment(world_size, environ):
    """SLURMTUNE_TRIAL_SHAPE ("nodes:N", "ranks:R" or "gpus:G:GPUS_PER_NODE", set by
    ``slurmtune run`` from [resources]); without it the whole step is one group."""
    text = environ.get("SLURMTUNE_TRIAL_SHAPE", "")
    if not text:
        return TrialShape("ranks", world_size)
    kind, _, rest = text.partition(":")
    numbers = rest.split(":")
    try:
        if kind in ("nodes", "ranks") and len(numbers) == 1:
            return TrialShape(kind, int(numbers[0]))
        if kind == "gpus" and len(numbers) == 2:
            return TrialShape(kind, int(numbers[0]), int(numbers[1]))
    except ValueError:
        pass
    raise PartitionError("SLURMTUNE_TRIAL_SHAPE='%s' is not nodes:N, ranks:R or gpus:G:N" % text)


class Partition:
    def __init__(self, groups, size):
        self.groups = groups  # world ranks of each group, in node order
        self.color = [-1] * size  # per world rank: its group, or -1 (idle)
        for g, ranks in enumerate(groups):
            for r in ranks:
                self.color[r] = g
        self.idle = [r for r in range(size) if self.color[r] < 0]

    def summary(self):
        """'4 group(s) of 2 rank(s), 1 rank(s) idle (7)', as the C++ groups print it."""
        sizes = [len(g) for g in self.groups]
        text = "%d group(s) of " % len(self.groups)
        if min(sizes) != max(sizes):
            text += "%d-" % min(sizes)
        text += "%d rank(s)" % max(sizes)
        if self.idle:
            text += ", %d rank(s) idle (%s%s)" % (len(self.idle), " ".join(map(str, self.idle[:8])),
                                                 " ..." if len(self.idle) > 8 else "")
        return text


def _ranks_by_node(placements):
    """World ranks of each node (nodes by index, ranks by local rank)."""
    n = len(placements)
    seen = [False] * n
    nodes = {}
    for rank, node, local_rank in placements:
        if rank < 0 or rank >= n or seen[rank]:
            raise PartitionError("rank placements: rank %d is %s among %d ranks" % (
                rank, "out of range" if rank < 0 or rank >= n else "listed twice", n))
        seen[rank] = True
        nodes.setdefault(node, []).append((local_rank, rank))
    return [[rank for _, rank in sorted(nodes[node])] for node in sorted(nodes)]


def _groups_of(nodes, size):
    """Groups of ``size`` ranks: packed inside each node when a node can hold one,
    otherwise made of consecutive whole nodes."""
    if size <= max((len(n) for n in nodes), default=0):
        return [n[first:first + size] for n in nodes for first in range(0, len(n) - size + 1, size)]
    groups, current = [], []
    for n in nodes:
        current.extend(n)
        if len(current) >= size:
            groups.append(current[:size])  # the rest of this node stays idle
            current = []
    return groups


def partition_ranks(placements, shape):
    """``placements``: (world rank, node index, local rank) of every rank."""
    if shape.count < 1:
        raise PartitionError("%s: the count must be at least 1" % shape)
    nodes = _ranks_by_node(placements)
    if shape.kind == "nodes":
        groups = [sum(nodes[first:first + shape.count], [])
                  for first in range(0, len(nodes) - shape.count + 1, shape.count)]
    else:
        if shape.kind == "gpus":
            if shape.gpus_per_node < 1:
                raise PartitionError("%s: the nodes have no GPUs (gpus_per_node = 0)" % shape)
            # One rank drives one GPU: ranks beyond the node's GPU count have nothing to drive.
            nodes = [n[:shape.gpus_per_node] for n in nodes]
        groups = _groups_of(nodes, shape.count)
    if not groups:
        raise PartitionError("cannot form one trial group of %s from %d rank(s) on %d node(s)"
                             % (shape, len(placements), len(_ranks_by_node(placements))))
    return Partition(groups, len(placements))
