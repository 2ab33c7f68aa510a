#!/usr/bin/env python3
"""The Python client builds exactly the payloads of the shared test vectors
(tests/protocol/vectors.json) that name one of its functions; the C++ decoders accept
the same payloads (unit.protocol.vectors). Standard library only.

    check_protocol_vectors.py SLURMTUNE (unused; every python.* test gets it)
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "share", "slurmtune", "python"))

from slurmtune import client  # noqa: E402


def main():
    vectors = json.load(open(os.path.join(ROOT, "tests", "protocol", "vectors.json")))
    checked = 0
    for entry in vectors["accept"]:
        built_by = entry.get("python")
        if not built_by:
            continue
        built = getattr(client, built_by["function"])(*built_by["args"])
        assert built == entry["payload"], (entry["message"], built, entry["payload"])
        # What goes on the wire parses back to the vector.
        assert json.loads(json.dumps(built)) == entry["payload"]
        checked += 1
    read = 0
    for entry in vectors["accept"]:
        reads = entry.get("python_reads")
        if not reads:
            continue
        got = getattr(client, reads["function"])(entry["payload"])
        expected = reads["result"]
        assert (got is None and expected is None) or list(got) == expected, \
            (entry["message"], got, expected)
        read += 1
    # What the coordinator sends and the C++ client refuses, the Python client refuses too
    # (the rules it checks itself: a DECISION's word, an assignment's fields).
    readers = {"DECISION": client.parse_decision,
               "WELCOME": lambda body: client.parse_assignment(body, "WELCOME"),
               "ASSIGN": lambda body: client.parse_assignment(body, "ASSIGN")}
    refused = 0
    for entry in vectors["refuse"]:
        reader = readers.get(entry["message"])
        if not reader:
            continue
        try:
            reader(entry["payload"])
        except client.ClientError:
            refused += 1
        else:
            raise AssertionError("the Python client read what the C++ client refuses: %r" % entry)
    assert checked >= 6 and read >= 7 and refused >= 5, (checked, read, refused)
    print("protocol vectors: the Python client builds %d payloads exactly as the vectors "
          "the C++ decoders accept, reads %d as they do, and refuses %d as they do"
          % (checked, read, refused))


if __name__ == "__main__":
    main()
