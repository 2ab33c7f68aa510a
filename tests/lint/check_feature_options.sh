#!/usr/bin/env bash
# SLURMTUNE_ENABLE_{MPI,PMIX,PARALLEL_HDF5} are AUTO/ON/OFF: ON with its dependency
# missing stops the configure with a message naming it, AUTO goes on without it, and a
# value that is none of the three is refused. MPI is hidden with
# CMAKE_DISABLE_FIND_PACKAGE_MPI, as on a machine without it. Configures only.
#   check_feature_options.sh SOURCE_DIR SCRATCH_DIR
set -uo pipefail
source=$1 scratch=$2
failures=0
configure() {  # configure ARGS... : prints the output, returns cmake's status
  rm -rf "$scratch"
  cmake -S "$source" -B "$scratch" -DSLURMTUNE_BUILD_TESTS=OFF -DSLURMTUNE_BUILD_BENCHMARKS=OFF \
        -DSLURMTUNE_BUILD_EXAMPLES=OFF "$@" 2>&1
}
expect() {  # expect STATUS PATTERN ARGS...
  local want=$1 pattern=$2; shift 2
  local out status
  out=$(configure "$@"); status=$?
  if { [ "$want" = fails ] && [ $status -eq 0 ]; } || { [ "$want" = works ] && [ $status -ne 0 ]; } ||
     ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: cmake $* should have $want with /$pattern/ (status $status):"
    tail -15 <<<"$out"
    failures=$((failures + 1))
  else
    echo "ok: $* -> $want, /$pattern/"
  fi
}
no_mpi=-DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON
expect fails 'SLURMTUNE_ENABLE_MPI=ON: MPI .* not found' $no_mpi -DSLURMTUNE_ENABLE_MPI=ON
expect works 'SLURMTUNE_ENABLE_MPI=AUTO: MPI .* not found; building without it.*' $no_mpi
expect works 'MPI trial API \.+ OFF' $no_mpi -DSLURMTUNE_ENABLE_MPI=AUTO
expect fails 'SLURMTUNE_ENABLE_PMIX=ON needs the MPI trial API' -DSLURMTUNE_ENABLE_MPI=OFF -DSLURMTUNE_ENABLE_PMIX=ON
expect fails 'SLURMTUNE_ENABLE_PARALLEL_HDF5=maybe: give AUTO, ON or OFF' -DSLURMTUNE_ENABLE_PARALLEL_HDF5=maybe
expect works 'PMIx placement \.+ OFF' -DSLURMTUNE_ENABLE_PMIX=off
rm -rf "$scratch"
[ $failures -eq 0 ] && echo "feature options: AUTO, ON and OFF behave as documented"
[ $failures -eq 0 ]
