#!/usr/bin/env python3
"""Every header compiles on its own, and twice in one translation unit.

    check_headers.py SOURCE_DIR BUILD_DIR

A header that leans on what its includer happened to include first breaks the next file
that includes it in another order. A header whose own .cpp includes it first, before
anything else, and which the build compiled (BUILD_DIR/compile_commands.json), was
compiled on its own by that build; with `#pragma once` it may be included twice. Each
other header under src/ and include/ is compiled alone (-fsyntax-only, included twice)
with the flags of a translation unit of the same module from compile_commands.json (the
union over the folder's translation units, which may belong to two libraries), so it
sees the include paths and definitions its module has. (Compiling every header took
two of CI's CPU minutes, most of them proving again what the build had.) Headers of a
module this build did not compile (the trial API without MPI) are listed as skipped.
Standard library only.
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys


def module_of(path):
    """src/core/search/x.hpp -> src/core/search; include/slurmtune/x.hpp -> src/client."""
    parts = path.split("/")
    if parts[0] == "include":
        return None  # public headers: any TU of the client or trial API
    return "/".join(parts[:-1])


def compiled_first_by_the_build(source, header, built):
    """Whether HEADER's own .cpp (src/a/b.hpp -> src/a/b.cpp), which the build compiled,
    includes it before anything else, as "a/b.hpp"."""
    unit = header[:-len(".hpp")] + ".cpp"
    if unit not in built:
        return False
    own = header[len("src/"):] if header.startswith("src/") else None
    with open(os.path.join(source, unit)) as f:
        for line in f:
            text = line.strip()
            if not text or text.startswith(("//", "/*", "*")):
                continue
            # The first line of code: a definition above the include would not be "alone".
            return own is not None and text == '#include "%s"' % own
    return False


def has_pragma_once(path):
    with open(path) as f:
        return any(line.strip() == "#pragma once" for line in f)


def main():
    source, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    commands = json.load(open(os.path.join(build, "compile_commands.json")))
    flags_of = {}  # module folder -> flags of one of its translation units
    for entry in commands:
        file = os.path.relpath(entry["file"], source)
        if not file.startswith("src/") or not file.endswith(".cpp"):
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
        kept = []  # (flag,) or (flag, value): a unit is merged whole
        args = iter(argv[1:])
        for arg in args:
            if arg in ("-o", "-MF", "-MT", "-MQ"):
                next(args, None)
            elif arg in ("-c", "-MD", "-MMD") or arg.endswith(".cpp"):
                continue
            elif arg in ("-isystem", "-I", "-D", "-U", "-include", "-iquote", "-idirafter"):
                kept.append((arg, next(args, "")))
            else:
                kept.append((arg,))
        folder = os.path.dirname(file)
        keys = [folder]
        # the public headers are checked with the flags of the library that ships them
        if folder in ("src/trial", "src/client"):
            keys.append("include/" + folder[4:])
        for key in keys:
            compiler, known, directory = flags_of.setdefault(key, (argv[0], [], entry["directory"]))
            known.extend(f for f in kept if f not in known)
    headers = subprocess.run(["git", "-C", source, "ls-files", "--", "src/*.hpp", "include/*.hpp"],
                             capture_output=True, text=True, check=True).stdout.split()
    if not headers:
        print("FAIL: git ls-files listed no headers")
        sys.exit(1)

    def flags_for(header):
        folder = os.path.dirname(header)
        if header.startswith("include/"):
            name = os.path.basename(header)
            for key in ("include/trial", "include/client"):
                if key in flags_of and (key == "include/client") == (name == "client.hpp"):
                    return flags_of[key]
            return flags_of.get("include/client")
        while folder and folder not in flags_of:
            folder = os.path.dirname(folder)
        return flags_of.get(folder)

    def check(header):
        found = flags_for(header)
        if not found:
            return header, None
        compiler, flags, directory = found
        text = '#include "%s"\n#include "%s"\n' % ((os.path.join(source, header),) * 2)
        argv = [compiler, *(part for unit in flags for part in unit), "-fsyntax-only", "-x", "c++", "-"]
        run = subprocess.run(argv, input=text,
                             capture_output=True, text=True, cwd=directory)
        return header, run

    built = {os.path.relpath(e["file"], source) for e in commands}
    failed, skipped = [], []
    proven = [h for h in headers if compiled_first_by_the_build(source, h, built)]
    for header in proven:
        if not has_pragma_once(os.path.join(source, header)):
            failed.append(header)
            print("FAIL: %s has no #pragma once: it cannot be included twice" % header)
    jobs = int(os.environ.get("JOBS", os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for header, run in pool.map(check, [h for h in headers if h not in proven]):
            if run is None:
                skipped.append(header)
            elif run.returncode != 0:
                failed.append(header)
                print("FAIL: %s does not compile on its own:\n%s" % (header, run.stderr[-3000:]))
    print("headers: %d compile on their own (%d first in their own .cpp of this build), %d fail, "
          "%d skipped (module not built here%s)"
          % (len(headers) - len(failed) - len(skipped), len(proven), len(failed), len(skipped),
             ": " + ", ".join(skipped) if skipped else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
