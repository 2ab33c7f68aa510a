#!/usr/bin/env bash
# Inputs that are not regular files (issue #41, item 14): a named pipe as a study file, a
# results file, recorded curves or a warm start, and a folder as a results file. Each is
# refused at once (`timeout` turns a blocked open into a failure), with the path once and,
# for a warm start, the place in the study file that names it.
#   check_not_regular.sh SLURMTUNE
set -u
slurmtune=$1
expect=$(realpath "$(dirname "$0")")/expect.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
check() { timeout 30 bash "$expect" "$@" >/dev/null || { echo "FAILED: $*"; timeout 30 bash "$expect" "$@"; failures=$((failures + 1)); }; }

mkfifo pipe.h5 pipe.toml pipe.csv
mkdir folder.h5
cat > study.toml <<'TOML'
[study]
name = "s"
metric = "loss"
sampler = "tpe"
[search]
x = { uniform = [0, 1] }
[trial]
command = ["true"]
TOML
sed 's/sampler = "tpe"/sampler = "tpe"\n[sampler]\nwarm_start = ["pipe.h5"]/' study.toml > warm.toml
sed 's/sampler = "tpe"/sampler = "tpe"\n[sampler]\nwarm_start = ["missing.h5"]/' study.toml > warm-missing.toml

pipe='not a regular file \(a named pipe\)'
check 1 "pipe.toml: $pipe; a study file must be a regular file" "$slurmtune" validate pipe.toml
check 1 "pipe.h5: $pipe; a results file must be a regular file" "$slurmtune" status pipe.h5
check 1 "pipe.h5: $pipe" "$slurmtune" best pipe.h5
check 1 "pipe.h5: $pipe" "$slurmtune" export pipe.h5
check 1 "folder.h5: not a regular file \(a folder\)" "$slurmtune" status folder.h5
check 1 "pipe.csv: $pipe; recorded curves" "$slurmtune" simulate study.toml --curves pipe.csv
# The warm start's refusal: where the study file names it, then the path, once.
check 1 "^slurmtune validate: error: warm.toml:6:14: \[sampler\] warm_start: [^ ]*pipe.h5: $pipe; a results file must be a regular file$" \
  "$slurmtune" validate warm.toml
check 1 "^slurmtune validate: error: warm-missing.toml:6:14: \[sampler\] warm_start: [^ ]*missing.h5: no such file$" \
  "$slurmtune" validate warm-missing.toml
[ "$failures" -eq 0 ] && echo "not-regular inputs: 8 cases refused at once"
exit $((failures > 0))
