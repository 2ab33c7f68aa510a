# Spack recipe for slurmtune: `spack repo add <slurmtune>/spack && spack install slurmtune`.
# Every variant maps one to one onto a CMake option (tests/package/check_spack.py checks
# that, and that the dependencies match what CMakeLists.txt looks for).
from spack.package import *


class Slurmtune(CMakePackage, CudaPackage):
    """Hyperparameter optimization (ASHA, Hyperband, median stopping) that lives inside
    a Slurm allocation: trials as job steps or as MPI sub-communicators of one step, an
    authenticated control plane, and one results file per study."""

    # The project's address is set once, in CMakeLists.txt (project HOMEPAGE_URL);
    # tests/package/check_spack.py checks that these two follow it.
    homepage = "https://github.com/slurmtune/slurmtune"
    git = "https://github.com/slurmtune/slurmtune.git"

    maintainers("slurmtune")
    license("Apache-2.0")

    version("main", branch="main")
    # Releases are fetched by commit (tagged v<version> in the repository): a commit is
    # checked by git itself and needs no tag to be pushed (doc/install.md#releases).
    version("0.1.0", commit="d9c1342483367a9b559dd91cbcca58d6aedc000c")

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
    variant(
        "plots",
        default=True,
        when="+python",
        description="matplotlib for the analysis module's plots and `slurmtune html`",
    )

    conflicts("+nccl", when="~cuda", msg="NCCL needs +cuda")
    conflicts(
        "cuda_arch=none",
        when="+cuda",
        msg="+cuda needs the GPUs' architecture: say cuda_arch=<sm> (80 for A100, 90 for H100)",
    )
    conflicts("+cuda", when="~mpi", msg="the GPU helpers belong to the MPI trial API")

    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("c", type="build")  # CMake's FindHDF5 probes the HDF5 C library with C
    depends_on("cxx", type="build")
    depends_on("boost@1.74:+program_options")
    depends_on("boost@1.74:+program_options+test", type=("build", "test"))
    depends_on("tomlplusplus@3:")
    depends_on("openssl@1.1:")  # libcrypto: the control plane's HMAC, tokens
    depends_on("icu4c@60:")  # Unicode normalization: names that read alike
    depends_on("eigen@3.3:", type="build")  # header-only: the curve and GP models
    depends_on("cereal@1.3:", type="build")  # header-only: the decision state's snapshot
    depends_on("simdjson@3:")  # replay's event lines
    depends_on("zlib-api")  # the CRC-32 of the results file's write-ahead log
    depends_on("lz4@1.9:")  # ... and its records, compressed
    # One HDF5 in a DAG: the MPI build when trials checkpoint collectively (the results file
    # itself is written by one process and works with either).
    depends_on("hdf5@1.10:+hl~mpi", when="~mpi")
    depends_on("hdf5@1.10:+hl~mpi", when="~parallel_hdf5")
    depends_on("hdf5@1.10:+mpi", when="+parallel_hdf5")
    depends_on("mpi", when="+mpi")
    depends_on("pmix", when="+pmix")
    # UCX comes through the MPI's fabrics (Open MPI's pml ucx) rather than directly.
    depends_on("openmpi fabrics=ucx", when="+mpi ^[virtuals=mpi] openmpi")
    depends_on("nccl", when="+nccl")
    # NCCL built for the same GPUs as slurmtune (the usual CudaPackage pairing).
    for arch in CudaPackage.cuda_arch_values:
        depends_on(f"nccl cuda_arch={arch}", when=f"+nccl cuda_arch={arch}")
    depends_on("zlib-api", when="+examples")
    depends_on("python@3.9:", type="run", when="+python")
    depends_on("py-h5py", type="run", when="+python")
    depends_on("py-pandas", type="run", when="+python")
    depends_on("py-numpy", type="run", when="+python")
    depends_on("py-matplotlib", type="run", when="+plots")
    # `slurmtune dashboard`: the HTTP server, and Chart.js drawn in the browser (the page
    # never loads anything from the internet, which compute nodes often lack).
    depends_on("py-tornado@6:", type="run", when="+python")
    resource(
        name="chartjs",
        url="https://registry.npmjs.org/chart.js/-/chart.js-3.9.1.tgz",
        sha256="111e0751796f087a51e94dfed910ccfb1278fd30e584a6e48514dba9ae7e72c6",
        destination="",
        placement="chartjs",  # the archive's package/ lands as <source>/chartjs
    )
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
            self.define("SLURMTUNE_CHARTJS",
                        join_path(self.stage.source_path, "chartjs", "dist", "chart.min.js")),
        ]
        if self.spec.satisfies("+cuda"):
            archs = self.spec.variants["cuda_arch"].value
            if archs and archs[0] != "none":
                args.append(self.define("CMAKE_CUDA_ARCHITECTURES", ";".join(archs)))
        if self.spec.satisfies("+nccl"):
            args.append(self.define("NCCL_HOME", self.spec["nccl"].prefix))
        if self.spec.satisfies("+python"):
            # html and dashboard run this interpreter by default, not python3 on PATH
            args.append(self.define("SLURMTUNE_PYTHON", self.spec["python"].command.path))
        return args

    def setup_run_environment(self, env):
        """`spack load slurmtune` gives the Python package (`import slurmtune.study`), and
        `slurmtune html` the Python with its run dependencies, as the Lmod module of a
        CMake install does."""
        if self.spec.satisfies("+python"):
            env.prepend_path("PYTHONPATH", self.prefix.share.slurmtune.python)
            env.set("SLURMTUNE_PYTHON", self.spec["python"].command.path)

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

    def test_python_module(self):
        """slurmtune.study imports and reads a results file that slurmtune simulate wrote"""
        if not self.spec.satisfies("+python"):
            raise SkipTest("the Python module needs +python")
        slurmtune = which(self.prefix.bin.slurmtune)
        example = join_path(self.prefix.share.slurmtune.examples, "mlp-digits.toml")
        slurmtune("simulate", example, "--quiet", "-o", "study.h5")
        python = self.spec["python"].command
        out = python(
            "-c",
            "from slurmtune.study import Study; s = Study('study.h5'); "
            "print(s.name, len(s.trials), s.best_trial.name)",
            output=str.split,
            error=str.split,
        )
        assert "mlp-digits" in out, out
