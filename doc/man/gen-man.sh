#!/usr/bin/env bash
# Writes the man pages of a built slurmtune: slurmtune(1) and slurmtune-COMMAND(1) from
# the command's own --help (so they never drift from the code), and slurmtune-study(5)
# from the hand-written page next to this script.
#   gen-man.sh SLURMTUNE OUTDIR VERSION
set -euo pipefail
slurmtune=$1 out=$2 version=$3
here=$(dirname "$0")
mkdir -p "$out/man1" "$out/man5"
date=2026-11-22

escape() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/" -e 's/-/\\-/g'; }

commands=$("$slurmtune" --help | awk '/^commands:/{on=1;next} on && !NF {exit} on {print $1}')
{
  echo ".TH SLURMTUNE 1 \"$date\" \"slurmtune $version\" \"User Commands\""
  echo ".SH NAME"
  echo "slurmtune \\- hyperparameter optimization inside a Slurm allocation"
  echo ".SH SYNOPSIS"
  echo ".B slurmtune"
  echo ".I command"
  echo "[\\fIoptions\\fR]"
  echo ".SH DESCRIPTION"
  echo "slurmtune runs a hyperparameter study (ASHA, Hyperband, median stopping, ...) inside"
  echo "one Slurm allocation or on a workstation, and records every trial, report and decision"
  echo "in one HDF5 results file. A study is described by a TOML study file, see"
  echo ".BR slurmtune-study (5)."
  echo ".SH COMMANDS"
  "$slurmtune" --help | awk '/^commands:/{on=1;next} on && !NF {exit} on {name=$1; $1=""; sub(/^ +/, ""); print ".TP\n.B " name "\n" $0}' | sed 's/-/\\-/g'
  echo ".SH EXIT STATUS"
  echo "0 success; 1 bad input or a failed run; 2 bad command line; 3 and 4 (report) stop and"
  echo "pause; 75 (run) stopped early with work left: run it again to resume."
  echo ".SH SEE ALSO"
  for c in $commands; do printf '.BR slurmtune-%s (1),\n' "$c"; done
  echo ".BR slurmtune-study (5)"
} > "$out/man1/slurmtune.1"

for c in $commands; do
  summary=$("$slurmtune" --help | awk -v c="$c" '$1 == c {$1=""; sub(/^ +/, ""); print}')
  help=$("$slurmtune" "$c" --help)
  {
    echo ".TH SLURMTUNE-${c^^} 1 \"$date\" \"slurmtune $version\" \"User Commands\""
    echo ".SH NAME"
    echo "slurmtune-$c \\- $summary" | sed 's/ - / \\- /'
    echo ".SH SYNOPSIS"
    echo "$help" | sed -n 's/^usage: //p' | escape
    echo ".SH OPTIONS"
    echo ".nf"
    echo "$help" | sed '1,/^$/d' | escape
    echo ".fi"
    echo ".SH SEE ALSO"
    echo ".BR slurmtune (1),"
    echo ".BR slurmtune-study (5)"
  } > "$out/man1/slurmtune-$c.1"
done
sed -e "s/@VERSION@/$version/" -e "s/@DATE@/$date/" "$here/slurmtune-study.5.in" > "$out/man5/slurmtune-study.5"
