# Spack recipe for slurmtune: `spack repo add <slurmtune>/spack && spack install slurmtune`.
# Every variant maps one to one onto a CMake option (tests/package/check_spack.py checks
# that, and that the dependencies match what CMakeLists.txt looks for).
from spack.package import *


class Slurmtune(CMakePackage, CudaPackage):
    """Hyperparameter optimization (ASHA, Hyperband, median stopping) that lives inside
    a Slurm allocation: trials as job steps or as MPI sub-communicators of one step, an
    authenticated control plane, and one HDF5 study file per study."""

    homepage = "https://github.com/slurmtune/slurmtune"
    git = "https://github.com/slurmtune/slurmtune.git"

    maintainers("slurmtune")
    license("Apache-2.0")

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    variant("mpi", default=True, description="MPI trial API (slurmtune::trial, run_trials)")
    # Parts of the MPI trial API exist only with +mpi: `spack install slurmtune ~mpi` needs
    # nothing else said.
    variant(
        "pmix",
        default=True,
        when="+mpi",
        description="Rank placement from PMIx (else MPI_Comm_split_type)",
    )
    variant(
        "parallel_hdf5",
        default=True,
        when="+mpi",
        description="Collective trial checkpoints with HDF5 over MPI-IO",
    )
    variant("nccl", default=False, description="NCCL communicators for trials (needs +cuda)")
    variant(
        "examples", default=False, when="+mpi", description="Build the mlp-digits example trainer"
    )
    variant("python", default=True, description="Python client and analysis module (run deps)")

    conflicts("+nccl", when="~cuda", msg="NCCL needs +cuda")
    conflicts("+cuda", when="~mpi", msg="the GPU helpers belong to the MPI trial API")

    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("c", type="build")  # CMake's FindHDF5 probes the HDF5 C library with C
    depends_on("cxx", type="build")
    depends_on("boost@1.74:+program_options")
    depends_on("boost@1.74:+program_options+test", type=("build", "test"))
    depends_on("tomlplusplus@3:")
    # One HDF5 in a DAG: the MPI build when trials checkpoint collectively (the study file
    # itself is written by one process and works with either).
    depends_on("hdf5@1.10:+hl~mpi", when="~mpi")
    depends_on("hdf5@1.10:+hl~mpi", when="~parallel_hdf5")
    depends_on("hdf5@1.10:+mpi", when="+parallel_hdf5")
    depends_on("mpi", when="+mpi")
    depends_on("pmix", when="+pmix")
    # UCX comes through the MPI's fabrics (Open MPI's pml ucx) rather than directly.
    depends_on("openmpi fabrics=ucx", when="+mpi ^[virtuals=mpi] openmpi")
    depends_on("nccl", when="+nccl")
    depends_on("zlib-api", when="+examples")
    depends_on("python@3.9:", type="run", when="+python")
    depends_on("py-h5py", type="run", when="+python")
    depends_on("py-pandas", type="run", when="+python")
    depends_on("py-numpy", type="run", when="+python")
    depends_on("py-matplotlib", type="run", when="+python")  # plots, `slurmtune html`
    depends_on("slurm", type="run")

    def cmake_args(self):
        args = [
            self.define_from_variant("SLURMTUNE_ENABLE_MPI", "mpi"),
            self.define_from_variant("SLURMTUNE_ENABLE_PMIX", "pmix"),
            self.define_from_variant("SLURMTUNE_ENABLE_PARALLEL_HDF5", "parallel_hdf5"),
            self.define_from_variant("SLURMTUNE_ENABLE_CUDA", "cuda"),
            self.define_from_variant("SLURMTUNE_ENABLE_NCCL", "nccl"),
            self.define_from_variant("SLURMTUNE_BUILD_EXAMPLES", "examples"),
            self.define("SLURMTUNE_BUILD_TESTS", self.run_tests),
            self.define("SLURMTUNE_BUILD_BENCHMARKS", False),
        ]
        if self.spec.satisfies("+cuda"):
            archs = self.spec.variants["cuda_arch"].value
            if archs and archs[0] != "none":
                args.append(self.define("CMAKE_CUDA_ARCHITECTURES", ";".join(archs)))
        if self.spec.satisfies("+nccl"):
            args.append(self.define("NCCL_HOME", self.spec["nccl"].prefix))
        return args

    def check(self):
        """`spack install --test=root`: the tests that belong in an install check (unit
        and command-line), not the ones that start a Slurm cluster or MPI jobs."""
        with working_dir(self.build_directory):
            ctest("--output-on-failure", "-L", "unit|cli")

    def test_version(self):
        """slurmtune --version names this version"""
        slurmtune = which(self.prefix.bin.slurmtune)
        out = slurmtune("--version", output=str.split, error=str.split)
        assert str(self.spec.version) in out or "main" in str(self.spec.version)

    def test_validate_example(self):
        """slurmtune validate accepts an installed example study"""
        slurmtune = which(self.prefix.bin.slurmtune)
        example = join_path(self.prefix.share.slurmtune.examples, "mlp-digits.toml")
        slurmtune("validate", "--quiet", example)
