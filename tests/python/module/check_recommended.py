#!/usr/bin/python3
"""The recommended setting is one setting: the study-file snippet of doc/schedulers.md,
share/slurmtune/examples/numpy-mlp/fast.toml and the "recommended" row of
tests/bench/quality/hpo_quality.py agree, and `slurmtune validate` prints it resolved.

    check_recommended.py SLURMTUNE
"""
import os
import re
import subprocess
import sys
import tomllib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "bench", "quality"))
import hpo_quality  # noqa: E402


def snippet():
    with open(os.path.join(ROOT, "doc", "schedulers.md")) as f:
        text = f.read()
    section = text.split("## A good configuration as soon as possible", 1)[1]
    block = re.search(r"```toml\n(.*?)```", section, re.S)
    assert block, "doc/schedulers.md: no toml snippet under the recommended setting"
    return tomllib.loads(block.group(1))


def main():
    slurmtune = sys.argv[1]
    doc = snippet()
    example_path = os.path.join(ROOT, "share", "slurmtune", "examples", "numpy-mlp", "fast.toml")
    with open(example_path, "rb") as f:
        example = tomllib.load(f)
    assert doc["study"]["sampler"] == example["study"]["sampler"], (doc["study"], example["study"])
    for table in ("sampler", "scheduler"):
        for key, value in doc[table].items():
            if table == "scheduler" and key == "max_t":
                continue  # the study's own full run
            assert example[table].get(key) == value, f"[{table}] {key}: doc {value}, fast.toml {example[table].get(key)}"
    scheduler, sampler, options = hpo_quality.RECOMMENDED
    assert sampler == doc["study"]["sampler"], (sampler, doc["study"])
    assert options == doc["sampler"], (options, doc["sampler"])
    for key, value in scheduler.items():
        assert doc["scheduler"].get(key) == value, f"hpo_quality [scheduler] {key}: {value}, doc {doc['scheduler'].get(key)}"
    out = subprocess.run([slurmtune, "validate", example_path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for line in ("type = 'asha_promotion'", "rung_weighting = 'hyper-tune'", "num_candidates = 250"):
        assert re.search("^" + re.escape(line) + "$", out.stdout, re.M), f"validate does not print {line}:\n{out.stdout}"
    print("the recommended setting: doc/schedulers.md, numpy-mlp/fast.toml and hpo_quality.py agree; "
          "validate prints it resolved")


if __name__ == "__main__":
    main()
