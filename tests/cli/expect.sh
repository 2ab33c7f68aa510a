#!/usr/bin/env bash
# expect.sh STATUS REGEX COMMAND... : runs COMMAND, passes iff it exits with STATUS and
# its stdout+stderr matches the extended regular expression REGEX.
set -u
want_status=$1 pattern=$2
shift 2
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne "$want_status" ]; then
  echo "expect.sh: exit status $status, expected $want_status" >&2
  exit 1
fi
if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
  echo "expect.sh: output does not match /$pattern/" >&2
  exit 1
fi
