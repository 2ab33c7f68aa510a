#!/usr/bin/env python3
"""The Python client builds exactly the payloads of the shared test vectors
(tests/protocol/vectors.json) that name one of its functions; the C++ decoders accept
the same payloads (unit.protocol.vectors). Standard library only.

    check_protocol_vectors.py SLURMTUNE (unused; every python.* test gets it)
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
        assert list(got) == reads["result"], (entry["message"], got, reads["result"])
        read += 1
    for entry in vectors["refuse"]:
        if entry["message"] == "DECISION":
            try:
                client.parse_decision(entry["payload"])
            except client.ClientError:
                read += 1
            else:
                assert entry["payload"].get("decision") in ("continue", "stop", "pause"), entry
    assert checked >= 3 and read >= 3, (checked, read)
    print("protocol vectors: the Python client builds %d payloads exactly as the vectors "
          "the C++ decoders accept, and reads %d as they do" % (checked, read))


if __name__ == "__main__":
    main()
