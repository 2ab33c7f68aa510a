#!/usr/bin/env bash
# Packs what device-check.sh runs into one folder for a GPU machine that has the NVIDIA
# driver and CUDA but none of slurmtune's build dependencies (a lent, bare machine):
# the programs from BUILD, the shared libraries they and Open MPI's components load
# (not the C library, libstdc++, the CUDA driver or NCCL, which such a machine has), and
# Open MPI and PMIx under sysroot/ at their absolute paths.
#
#   tests/gpu/bundle.sh BUILD OUT
#
# There, as root:  cp -a OUT/sysroot/. / && source OUT/env.sh &&
#                  tests/gpu/device-check.sh OUTDIR --build OUT
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD OUT" >&2; exit 2; }
build=$(cd "$1" && pwd)
out=$2
rm -rf "$out"
mkdir -p "$out/src" "$out/tests/gpu" "$out/tests/run" "$out/lib" "$out/sysroot"

cp "$build/src/slurmtune" "$out/src/"
# The Python package where `slurmtune run` looks for it: bin/../share/slurmtune/python.
mkdir -p "$out/share/slurmtune"
cp -r "$(dirname "$0")/../../share/slurmtune/python" "$out/share/slurmtune/"
cp "$build/CMakeCache.txt" "$out/"
for program in tests/gpu/gpu_pack_trial tests/gpu/gpu_probe tests/run/gpu_trial; do
  [ -x "$build/$program" ] && cp "$build/$program" "$out/$program"
done

ompi=/usr/lib/x86_64-linux-gnu/openmpi
pmix=/usr/lib/x86_64-linux-gnu/pmix2
for tree in "$ompi" "$pmix" /usr/share/openmpi /usr/share/pmix /etc/openmpi; do
  [ -e "$tree" ] && mkdir -p "$out/sysroot$(dirname "$tree")" && cp -a "$tree" "$out/sysroot$(dirname "$tree")/"
done
mkdir -p "$out/sysroot/usr/bin"
cp -a /usr/bin/orterun /usr/bin/orted "$out/sysroot/usr/bin/"
ln -sf orterun "$out/sysroot/usr/bin/mpirun"

# The libraries every program and component loads, found by the loader here.
skip='^(libc|libm|libdl|librt|libpthread|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libnccl)\.so'
objects=("$out/src/slurmtune" "$out"/tests/*/* /usr/bin/orterun /usr/bin/orted)
mapfile -t -O "${#objects[@]}" objects < <(find "$ompi" "$pmix" -name '*.so*' -type f)
ldd "${objects[@]}" 2>/dev/null | awk '/=> \//{print $3}' | sort -u | while read -r library; do
  name=$(basename "$library")
  [[ $name =~ $skip ]] || cp -L "$library" "$out/lib/$name"
done

cat > "$out/env.sh" <<'EOF'
# Sourced on the GPU machine: the bundle's libraries first, then the machine's NCCL
# (a CUDA Python environment's nvidia-nccl wheel, or the CUDA Toolkit's).
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nccl=$(find /usr/local/cuda*/lib* /usr/lib /opt -name 'libnccl.so.2' 2>/dev/null | head -1)
export LD_LIBRARY_PATH=$bundle/lib${nccl:+:$(dirname "$nccl")}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
EOF
du -sh "$out"
