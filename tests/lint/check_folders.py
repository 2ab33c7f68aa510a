#!/usr/bin/env python3
"""src/'s folders as doc/architecture.md's folder table describes them (issue #40):

  - every folder of src/ that holds code has a row (what it is, what it may include),
    and every row names a folder that exists;
  - no folder holds more than 24 files (.cpp and .hpp together);
  - every `#include "a/b/file.hpp"` from a file in folder F names a file of F itself or
    of a folder F's row allows (`core/space`, or `core/**` for core and every folder
    below it);
  - the includes make no loop between folders, a folder and its subfolders included
    (issue #60): an interface's folder (core/search) knows none of its implementations
    (core/search/gp), which include it; the factory that picks one lives above both
    (core/study), so every include points one way.
  - every header of src/ and include/ is named in doc/architecture.md, and every header
    it names exists;
  - no folder of tests/, share/, include/ or doc/ holds more than 24 files (of any kind,
    subfolders not counted): a folder of test programs, benchmarks or fixtures is one idea
    too.

    check_folders.py SOURCE_DIR

Standard library only.
"""
import os
import re
import sys

MAX_FILES = 24
ROW = re.compile(r"^\| `([a-z_/]+)` \| (.+?) \|(.*)\|\s*$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_rules(architecture):
    """{folder: (sentence, [allowed folder patterns])} from the folder table."""
    rules = {}
    inside = False
    for line in open(architecture, encoding="utf-8"):
        if line.startswith("| folder | what it is | may include |"):
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        match = ROW.match(line) if inside else None
        if match:
            allowed = re.findall(r"`([a-z_/*]+)`", match.group(3))
            rules[match.group(1)] = (match.group(2).strip(), allowed)
    return rules


def allows(patterns, folder):
    for pattern in patterns:
        if pattern.endswith("/**"):
            root = pattern[:-3]
            if folder == root or folder.startswith(root + "/"):
                return True
        elif pattern == folder:
            return True
    return False


def find_loop(edges):
    """A loop in {node: {nodes}} as a list of nodes, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for successor in sorted(edges.get(node, ())):
            if state.get(successor) == "open":
                return path[path.index(successor):] + [successor]
            if successor not in state:
                loop = visit(successor, path + [successor])
                if loop:
                    return loop
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state:
            loop = visit(node, [node])
            if loop:
                return loop
    return None


def included_closure(src, start):
    """Every file of src/ that `start` (a path under src/) includes, directly or not."""
    seen, todo = set(), [start]
    while todo:
        path = todo.pop()
        full = os.path.join(src, path)
        if path in seen or not os.path.exists(full):
            continue
        seen.add(path)
        todo += INCLUDE.findall(open(full, encoding="utf-8").read())
    return seen


def client_engine_headers(src):
    """The report client trials link (src/client, src/protocol) includes none of the
    engine's models or schedulers (issue #60): a trial's build stays small."""
    problems = []
    for folder in ("client", "protocol", "protocol/wire"):
        for name in sorted(os.listdir(os.path.join(src, folder))):
            if not name.endswith(".cpp"):
                continue
            for path in sorted(included_closure(src, folder + "/" + name)):
                if path.startswith(("core/search/", "core/schedulers/", "core/study/")):
                    problems.append("src/%s/%s includes %s (through its includes): the report "
                                    "client needs no engine header" % (folder, name, path))
                    break
    return problems


def undocumented_files(source, architecture):
    """doc/architecture.md shows the source tree (issue #60): every header of src/ is named
    there, and every header it names exists."""
    doc = open(architecture, encoding="utf-8").read()
    named = set(re.findall(r"`(?:[a-z_/.]*/)?([a-z0-9_]+\.hpp)`", doc))
    # A header is shown by its name anywhere (the drawings are code blocks), by its .cpp,
    # or by its stem in backticks (`asha_scheduler`, a row for a family of files).
    stems = set(re.findall(r"`(?:[a-z_/.]*/)?([a-z0-9_]+)(?:\.cpp)?`", doc))
    shown = set(re.findall(r"\b([a-z0-9_]+)\.(?:hpp|cpp)\b", doc)) | stems
    headers = set()
    for folder, _, names in os.walk(os.path.join(source, "src")):
        headers |= {n for n in names if n.endswith(".hpp")}
    for folder, _, names in os.walk(os.path.join(source, "include")):
        headers |= {n for n in names if n.endswith(".hpp")}
    problems = ["doc/architecture.md does not name %s: give it a row or a sentence" % h
                for h in sorted(headers) if h[:-len(".hpp")] not in shown]
    problems += ["doc/architecture.md names %s, which no folder of src/ or include/ holds" % h
                 for h in sorted(named - headers)]
    return problems


def crowded_folders(source, tops=("tests", "share", "include", "doc")):
    """Problems for the folders outside src/ that hold more than MAX_FILES files."""
    problems = []
    for top in tops:
        for folder, _, names in os.walk(os.path.join(source, top)):
            if "__pycache__" in folder:
                continue
            files = [n for n in names if not n.endswith(".pyc")]
            if len(files) > MAX_FILES:
                problems.append("%s holds %d files (at most %d): split it by concern"
                                % (os.path.relpath(folder, source), len(files), MAX_FILES))
    return problems


def main():
    source = os.path.abspath(sys.argv[1])
    src = os.path.join(source, "src")
    rules = read_rules(os.path.join(source, "doc", "architecture.md"))
    problems = []
    if len(rules) < 20:
        problems.append("doc/architecture.md: the folder table has %d rows; is its header "
                        "'| folder | what it is | may include |'?" % len(rules))
    files_of = {}
    for folder, _, names in os.walk(src):
        code = sorted(n for n in names if n.endswith((".cpp", ".hpp")))
        if code:
            files_of[os.path.relpath(folder, src)] = code
    for folder, code in sorted(files_of.items()):
        if folder not in rules:
            problems.append("src/%s has no row in doc/architecture.md's folder table" % folder)
        if len(code) > MAX_FILES:
            problems.append("src/%s holds %d files (at most %d): split it by concern"
                            % (folder, len(code), MAX_FILES))
    for folder in sorted(set(rules) - set(files_of)):
        problems.append("doc/architecture.md names src/%s, which holds no code" % folder)
    problems += crowded_folders(source)

    edges = {}
    for folder, code in sorted(files_of.items()):
        allowed = rules.get(folder, ("", []))[1]
        for name in code:
            text = open(os.path.join(src, folder, name), encoding="utf-8").read()
            for included in INCLUDE.findall(text):
                target = os.path.dirname(included)
                if not target or target == folder:
                    continue
                if not allows(allowed, target):
                    problems.append("src/%s/%s includes %s: src/%s may not include src/%s "
                                    "(doc/architecture.md)" % (folder, name, included, folder, target))
                edges.setdefault(folder, set()).add(target)
    loop = find_loop(edges)
    if loop:
        problems.append("the includes make a loop between folders: %s" % " -> ".join(loop))
    problems += client_engine_headers(src)
    problems += undocumented_files(source, os.path.join(source, "doc", "architecture.md"))
    for problem in problems:
        print(problem)
    largest = sorted(files_of.items(), key=lambda item: -len(item[1]))[:3]
    print("folders: %d, largest %s; %d include edges between folders, %s" % (
        len(files_of), ", ".join("src/%s %d" % (f, len(c)) for f, c in largest),
        sum(len(v) for v in edges.values()), "a loop" if loop else "no loop"))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
