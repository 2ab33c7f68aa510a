#!/usr/bin/env python3
"""Checks the Spack recipe without Spack (it cannot be downloaded here):
  - spack/packages/slurmtune/package.py is valid Python and defines the package class;
  - its variants map one to one onto the SLURMTUNE_ENABLE_* / BUILD_EXAMPLES options of
    CMakeLists.txt through define_from_variant (cuda comes from CudaPackage);
  - its depends_on list covers what CMakeLists.txt looks for (the compilers of every
    language project() enables included), and nothing it never uses;
  - its homepage and git URL are CMakeLists.txt's HOMEPAGE_URL (the one place that names
    it; the module files take it from there too);
  - every release it lists can be fetched: a 40-digit commit (or a tag) that this
    repository holds, when it is a full git clone;
  - +cuda passes cuda_arch on to nccl and refuses cuda_arch=none;
  - `spack load` gives the Python package: the run environment puts the folder that
    CMake installs it to on PYTHONPATH.
Usage: check_spack.py SOURCE_DIR (standard library only)."""
import ast
import re
import sys

root = sys.argv[1]
recipe_path = root + "/spack/packages/slurmtune/package.py"
source = open(recipe_path).read()
tree = ast.parse(source, recipe_path)  # valid Python
classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Slurmtune"]
assert classes, "no class Slurmtune"
bases = {b.id for b in classes[0].bases if isinstance(b, ast.Name)}
assert {"CMakePackage", "CudaPackage"} <= bases, "bases: %s" % bases

calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))]
name = lambda c: c.func.id if isinstance(c.func, ast.Name) else c.func.attr
def strings(c):
    """The call's string arguments; of an f-string, its text up to the first field."""
    out = []
    for a in c.args:
        if isinstance(a, ast.JoinedStr) and a.values and isinstance(a.values[0], ast.Constant):
            a = a.values[0]
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            out.append(a.value)
    return out
variants = {strings(c)[0] for c in calls if name(c) == "variant"} | {"cuda"}  # +cuda: CudaPackage
mapped = {strings(c)[1]: strings(c)[0] for c in calls if name(c) == "define_from_variant"}
depends = {re.split(r"[@+~ ^]", strings(c)[0])[0] for c in calls if name(c) == "depends_on"}

cmake = open(root + "/CMakeLists.txt").read()
options = set(re.findall(r"(?:option|slurmtune_feature)\((SLURMTUNE_(?:ENABLE_\w+|BUILD_EXAMPLES))", cmake))
problems = []
if set(mapped.values()) != options:
    problems.append("CMake options %s vs define_from_variant %s" % (sorted(options), sorted(mapped.values())))
unmapped = variants - set(mapped) - {"python", "plots"}  # run dependencies only
if unmapped:
    problems.append("variants without a CMake option: %s" % sorted(unmapped))
for variant in mapped:
    if variant not in variants:
        problems.append("define_from_variant of unknown variant %s" % variant)

# What CMakeLists.txt finds -> the Spack package that provides it.
found = set(re.findall(r"find_package\((\w+)", cmake)) | set(re.findall(r"pkg_check_modules\(\w+ [A-Z ]*IMPORTED_TARGET ([\w+-]+)", cmake))
provider = {"Boost": "boost", "PkgConfig": "pkgconfig", "tomlplusplus": "tomlplusplus", "Eigen3": "eigen",
            "HDF5": "hdf5", "MPI": "mpi", "pmix": "pmix", "hdf5-openmpi": "hdf5",
            "CUDAToolkit": "cuda", "benchmark": None, "ZLIB": "zlib-api", "OpenSSL": "openssl",
            "simdjson": "simdjson", "ICU": "icu4c", "cereal": "cereal", "liblz4": "lz4"}
for package in sorted(found):
    if package not in provider:
        problems.append("CMakeLists.txt finds %s: map it to a Spack dependency here" % package)
    elif provider[package] and provider[package] not in depends and provider[package] != "cuda":
        problems.append("CMakeLists.txt finds %s but the recipe has no depends_on(%r)" % (package, provider[package]))
# Every language project() enables needs its compiler from Spack (a missing
# depends_on("c") made CMake's first step fail under `spack dev-build`).
languages = re.search(r"project\(slurmtune[^)]*LANGUAGES ([A-Z ]+)", cmake)
for language in (languages.group(1).split() if languages else []):
    virtual = {"C": "c", "CXX": "cxx", "CUDA": "cuda", "Fortran": "fortran"}[language]
    if virtual not in depends and virtual != "cuda":
        problems.append("project() enables %s: the recipe needs depends_on(%r, type='build')"
                        % (language, virtual))
examples = open(root + "/share/slurmtune/examples/mlp-digits/CMakeLists.txt").read()
if "ZLIB" in examples and "zlib-api" not in depends:
    problems.append("the example needs zlib: depends_on('zlib-api')")

# One address for the project.
homepage = re.search(r'HOMEPAGE_URL "([^"]+)"', cmake).group(1)
recipe_urls = dict(re.findall(r'^    (homepage|git) = "([^"]+)"', source, re.M))
if recipe_urls.get("homepage") != homepage or recipe_urls.get("git") != homepage + ".git":
    problems.append("recipe homepage/git %s are not CMakeLists.txt's HOMEPAGE_URL %s"
                    % (recipe_urls, homepage))
for module in ("slurmtune.lua.in", "slurmtune.tcl.in"):
    if "github.com" in open(root + "/modules/" + module).read():
        problems.append("modules/%s names the address itself: use @PROJECT_HOMEPAGE_URL@" % module)

# Releases that can be fetched.
import subprocess  # noqa: E402
def git(*argv):
    return subprocess.run(["git", "-C", root, *argv], capture_output=True, text=True)
full_clone = git("rev-parse", "--is-shallow-repository").stdout.strip() == "false"
releases = 0
for c in calls:
    if name(c) != "version" or strings(c)[0] == "main":
        continue
    releases += 1
    keywords = {k.arg: k.value.value for k in c.keywords if isinstance(k.value, ast.Constant)}
    commit, tag = keywords.get("commit"), keywords.get("tag")
    if not commit and not tag and "sha256" not in keywords:
        problems.append("version %s names no commit, tag or checksum" % strings(c)[0])
    if commit and not re.fullmatch(r"[0-9a-f]{40}", commit):
        problems.append("version %s: commit %r is not 40 hex digits" % (strings(c)[0], commit))
    elif commit and full_clone and git("cat-file", "-e", commit + "^{commit}").returncode != 0:
        problems.append("version %s: commit %s is not in this repository" % (strings(c)[0], commit))
    if tag and full_clone and git("rev-parse", "-q", "--verify", "refs/tags/" + tag).returncode != 0:
        problems.append("version %s: tag %s does not exist (git tag -l)" % (strings(c)[0], tag))

# GPU builds pass their architecture on.
if 'depends_on(f"nccl cuda_arch={arch}", when=f"+nccl cuda_arch={arch}")' not in source:
    problems.append("+nccl does not pass cuda_arch on to nccl")
if not re.search(r'conflicts\(\s*"cuda_arch=none",\s*when="\+cuda"', source):
    problems.append("+cuda cuda_arch=none is not refused")

# The run environment: where CMake installs the Python package.
# install(DIRECTORY share/slurmtune/python DESTINATION <datadir>/slurmtune): no trailing
# slash, so the folder lands as <prefix>/share/slurmtune/python.
installed = re.search(r"install\(DIRECTORY share/slurmtune/python DESTINATION \$\{CMAKE_INSTALL_DATADIR\}/slurmtune\s", cmake)
if not installed or 'env.prepend_path("PYTHONPATH", self.prefix.share.slurmtune.python)' not in source:
    problems.append("the recipe's run environment does not put the installed Python package "
                    "(share/slurmtune/python) on PYTHONPATH")
if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print("spack recipe: valid Python; variants %s map one to one onto %s; depends_on %s; "
      "address %s; %d release(s) %s; cuda_arch passed to nccl; PYTHONPATH set"
      % (sorted(mapped), sorted(options), sorted(depends), homepage, releases,
         "found in this clone" if full_clone else "(not checked: no full clone)"))
