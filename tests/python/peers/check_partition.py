#!/usr/bin/env python3
"""Python trial groups split a step as the C++ ones do: slurmtune.partition against
core::partition_ranks (through partition_probe) on random placements and shapes, same
groups, same summary line, same errors.

  check_partition.py SLURMTUNE PARTITION_PROBE
"""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "share", "slurmtune", "python"))
from slurmtune.partition import PartitionError, TrialShape, partition_ranks  # noqa: E402


def random_case(rng):
    nodes = rng.randint(1, 6)
    per_node = [rng.randint(1, 8) if rng.random() < 0.3 else rng.choice([2, 4]) for _ in range(nodes)]
    placements = [(node, local) for node in range(nodes) for local in range(per_node[node])]
    rng.shuffle(placements)  # world ranks need not follow the nodes
    cases = [(rank, node * 3 + 1, local) for rank, (node, local) in enumerate(placements)]
    if rng.random() < 0.03 and len(cases) > 1:  # a rank listed twice
        cases[-1] = (cases[0][0],) + cases[-1][1:]
    kind = rng.choice(["nodes", "ranks", "gpus"])
    count = rng.randint(0 if rng.random() < 0.03 else 1, 9 if kind != "nodes" else 4)
    return kind, count, rng.randint(0, 4) if kind == "gpus" else 0, cases


def python_answer(kind, count, gpus, cases):
    try:
        p = partition_ranks(cases, TrialShape(kind, count, gpus))
    except PartitionError as e:
        return "error %s" % e
    return "groups %s | %s" % (";".join(",".join(map(str, g)) for g in p.groups), p.summary())


def main():
    probe = sys.argv[2]
    rng = random.Random(5)
    cases = [random_case(rng) for _ in range(2000)]
    text = "".join("%s %d %d %d %s\n" % (k, c, g, len(p), " ".join("%d %d %d" % t for t in p))
                   for k, c, g, p in cases)
    out = subprocess.run([probe], input=text, capture_output=True, text=True, check=True).stdout
    expected = out.splitlines()
    assert len(expected) == len(cases), "probe answered %d of %d cases" % (len(expected), len(cases))
    errors = 0
    for case, want in zip(cases, expected):
        got = python_answer(*case)
        if got != want:
            print("MISMATCH for %s:\n  C++:    %s\n  Python: %s" % (case, want, got))
            errors += 1
            if errors > 5:
                break
    if errors:
        sys.exit(1)
    kinds = sum(1 for e in expected if e.startswith("error"))
    print("partition: %d random cases, the Python partition equals the C++ one in each "
          "(%d of them errors, with the same message)" % (len(cases), kinds))


if __name__ == "__main__":
    main()
