#!/usr/bin/env python3
"""Runs one libFuzzer target for a bounded time, then triages what it found.

    run_fuzzer.py TARGET SEED_DIR WORK_DIR SECONDS

The target runs in fork mode, so it goes on after a finding until SECONDS are spent;
new inputs go to WORK_DIR/corpus, findings to WORK_DIR/findings. Each finding is run
again alone and classified by the innermost stack frame outside the sanitizer runtime
and the C library: in libhdf5 it is a defect of the HDF5 library on a damaged file
(listed, and counted, but it does not fail the test: slurmtune cannot fix HDF5, and its
commands report such files as corrupted, see src/cli/results/damaged_file_guard.hpp); anywhere
else it is slurmtune's, and the test fails. Standard library only.
"""
import os
import re
import shutil
import subprocess
import sys

FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?:in (?P<func>\S+) )?\s*\(?(?P<where>[^)\s]+)")
RUNTIME = re.compile(r"^(__interceptor_|__asan|__sanitizer|__ubsan|__lsan|fuzzer::|__libc_|"
                     r"_start$|malloc$|calloc$|realloc$|free$|operator new|memcpy$|memmove$|"
                     r"LLVMFuzzerTestOneInput$)")
SYSTEM = re.compile(r"/(libc|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so")


def main():
    target, seeds, work, seconds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    corpus, findings = os.path.join(work, "corpus"), os.path.join(work, "findings")
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(findings, exist_ok=True)
    # Targets that need a file (fuzz_study_h5) write it to the temp folder; this one is
    # the test's own, so a run leaves nothing in the system's.
    scratch = os.path.join(work, "tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, TMPDIR=scratch)
    env.setdefault("LSAN_OPTIONS", "suppressions=" + os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "lsan.supp"))
    run = subprocess.run([target, "-fork=1", "-ignore_crashes=1", "-ignore_timeouts=1",
                          "-ignore_ooms=1", "-max_total_time=" + seconds, "-timeout=10",
                          "-rss_limit_mb=2048", "-artifact_prefix=" + findings + "/",
                          corpus, seeds], env=env, capture_output=True, text=True)
    stats = [line for line in run.stderr.splitlines() if re.match(r"^#\d+: cov:", line)]
    name = os.path.basename(target)
    if run.returncode != 0 and not stats:
        print(run.stderr[-4000:])
        print("FAIL: %s did not run (exit status %d)" % (name, run.returncode))
        sys.exit(1)
    ours, hdf5 = [], []
    for finding in sorted(os.listdir(findings)):
        where = innermost_frame(target, os.path.join(findings, finding), env)
        (hdf5 if "/libhdf5" in where else ours).append((finding, where))
    summary = stats[-1] if stats else "(no statistics)"
    print("%s: %s" % (name, summary))
    for finding, where in hdf5:
        print("  HDF5 library defect (not slurmtune's): %s at %s" % (finding, where))
    for finding, where in ours:
        print("  FINDING: %s at %s (reproduce: %s %s)"
              % (finding, where, target, os.path.join(findings, finding)))
    executions = re.match(r"^#(\d+):", summary)
    print("%s: %s executions, %d slurmtune findings, %d HDF5 library defects"
          % (name, executions.group(1) if executions else "?", len(ours), len(hdf5)))
    sys.exit(1 if ours else 0)


def innermost_frame(target, finding, env):
    """The first stack frame of the report outside the runtime and the C library."""
    out = subprocess.run([target, "-timeout=10", "-rss_limit_mb=2048", finding], env=env,
                         capture_output=True, text=True, timeout=120).stderr
    for line in out.splitlines():
        match = FRAME.match(line)
        if not match:
            continue
        func, where = match.group("func") or "?", match.group("where")
        if RUNTIME.match(func) or SYSTEM.search(where):
            continue
        return re.sub(r"\s*\(BuildId: [0-9a-f]+\)", "", line.strip())[:300]
    return "no stack: " + " | ".join(out.strip().splitlines()[-3:])


if __name__ == "__main__":
    main()
