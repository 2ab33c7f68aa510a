#!/usr/bin/env python3
"""The shape src/runtime keeps (doc/architecture.md, issue #27): no file over 500 lines,
no class or struct with more than 25 member functions (constructors and operators
count; what the compiler declares implicitly does not), and the launch mode read only
where the backend is picked (backends/launch_backend.cpp) and where the launcher decides
who hands out a worker step's GPUs (launch/launcher.cpp). Every file of src/runtime's
folders counts.

    check_runtime_structure.py SOURCE_DIR CLANG

Classes are counted from clang's AST: of every runtime header (one translation unit
including them all) and of every runtime .cpp that defines a class of its own.
"""
import os
import re
import subprocess
import sys

MAX_LINES = 500
MAX_MEMBER_FUNCTIONS = 25
MODE_READERS = {"backends/launch_backend.cpp", "launch/launcher.cpp"}
MODE_PATTERN = re.compile(r"TrialSpec::Mode::|ResourceSpec::Launch::|group_mode\(\)|worker_mode\(\)")
RECORD = re.compile(r"^(?P<indent>[ |`-]*)CXXRecordDecl 0x\w+ <(?P<where>[^>]*)>.*? (?P<kind>class|struct) "
                    r"(?P<name>\w+) definition")
METHOD = re.compile(r"^(?P<indent>[ |`-]*)(CXXMethodDecl|CXXConstructorDecl|CXXDestructorDecl|"
                    r"CXXConversionDecl) 0x\w+ (?P<rest>.*)")


def depth(indent):
    return len(indent)


def member_counts(ast_text, runtime_dir):
    """{(file, class): member functions} for classes defined under runtime_dir."""
    counts = {}
    stack = []  # (depth, key or None)
    current_file = None
    for line in ast_text.splitlines():
        # clang names a file once and then says "line:N" until the next file.
        for path in re.findall(r"<(/[^:>]+):\d+:\d+", line):
            current_file = path
        record = RECORD.match(line)
        method = METHOD.match(line)
        level = len(line) - len(line.lstrip(" |`-"))
        while stack and stack[-1][0] >= level:
            stack.pop()
        if record:
            inside = current_file and os.path.realpath(current_file).startswith(runtime_dir + os.sep)
            key = (os.path.relpath(current_file, runtime_dir), record.group("name")) if inside else None
            if key and key not in counts:
                counts[key] = 0
            stack.append((level, key))
        elif method and stack and stack[-1][1] and stack[-1][0] == level - 2:
            if " implicit " not in " " + method.group("rest") + " ":
                counts[stack[-1][1]] += 1
    return counts


def ast_of(clang, source_dir, translation_unit):
    command = [clang, "-std=c++20", "-fsyntax-only", "-I" + os.path.join(source_dir, "src"),
               "-I" + os.path.join(source_dir, "include"), "-Xclang", "-ast-dump",
               "-Xclang", "-ast-dump-filter", "-Xclang", "slurmtune", translation_unit]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("check_runtime_structure: clang could not parse %s:\n%s" %
                 (translation_unit, done.stderr[-4000:]))
    return done.stdout


def main():
    source_dir, clang = os.path.abspath(sys.argv[1]), sys.argv[2]
    runtime_dir = os.path.realpath(os.path.join(source_dir, "src", "runtime"))
    files = sorted(os.path.relpath(os.path.join(folder, name), runtime_dir)
                   for folder, _, names in os.walk(runtime_dir) for name in names)
    problems = []
    for name in files:
        with open(os.path.join(runtime_dir, name)) as f:
            text = f.read()
        lines = text.count("\n")
        if lines > MAX_LINES:
            problems.append("src/runtime/%s has %d lines (at most %d)" % (name, lines, MAX_LINES))
        if name not in MODE_READERS:
            for number, line in enumerate(text.splitlines(), 1):
                if MODE_PATTERN.search(line) and not line.lstrip().startswith("//"):
                    problems.append("src/runtime/%s:%d reads the launch mode (only %s may): %s" %
                                    (name, number, " and ".join(sorted(MODE_READERS)), line.strip()))

    aggregate = os.path.join(os.environ.get("TMPDIR", "/tmp"), "slurmtune-runtime-headers-%d.cpp" % os.getpid())
    with open(aggregate, "w") as f:
        for name in files:
            if name.endswith(".hpp"):
                f.write('#include "runtime/%s"\n' % name)
    try:
        units = [aggregate] + [os.path.join(runtime_dir, name) for name in files
                               if name.endswith(".cpp") and re.search(
                                   r"^(class|struct) \w+[^;]*\{", open(os.path.join(runtime_dir, name)).read(),
                                   re.M)]
        counts = {}
        for unit in units:
            counts.update(member_counts(ast_of(clang, source_dir, unit), runtime_dir))
    finally:
        os.remove(aggregate)
    for (where, name), count in sorted(counts.items()):
        if count > MAX_MEMBER_FUNCTIONS:
            problems.append("%s in src/runtime/%s has %d member functions (at most %d)" %
                            (name, where, count, MAX_MEMBER_FUNCTIONS))
    if len(counts) < 20:
        problems.append("only %d runtime classes were found in clang's AST: the check is broken" % len(counts))
    for problem in problems:
        print(problem)
    largest = sorted(counts.items(), key=lambda item: -item[1])[:5]
    print("runtime structure: %d files, %d classes; most member functions: %s" %
          (len(files), len(counts), ", ".join("%s %d" % (name, n) for (_, name), n in largest)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
