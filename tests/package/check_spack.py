#!/usr/bin/env python3
"""Checks the Spack recipe without Spack (it cannot be downloaded here):
  - spack/packages/slurmtune/package.py is valid Python and defines the package class;
  - its variants map one to one onto the SLURMTUNE_ENABLE_* / BUILD_EXAMPLES options of
    CMakeLists.txt through define_from_variant (cuda comes from CudaPackage);
  - its depends_on list covers what CMakeLists.txt looks for (the compilers of every
    language project() enables included), and nothing it never uses.
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
strings = lambda c: [a.value for a in c.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
variants = {strings(c)[0] for c in calls if name(c) == "variant"} | {"cuda"}  # +cuda: CudaPackage
mapped = {strings(c)[1]: strings(c)[0] for c in calls if name(c) == "define_from_variant"}
depends = {re.split(r"[@+~ ^]", strings(c)[0])[0] for c in calls if name(c) == "depends_on"}

cmake = open(root + "/CMakeLists.txt").read()
options = set(re.findall(r"option\((SLURMTUNE_(?:ENABLE_\w+|BUILD_EXAMPLES))", cmake))
problems = []
if set(mapped.values()) != options:
    problems.append("CMake options %s vs define_from_variant %s" % (sorted(options), sorted(mapped.values())))
unmapped = variants - set(mapped) - {"python"}  # python: run dependencies only
if unmapped:
    problems.append("variants without a CMake option: %s" % sorted(unmapped))
for variant in mapped:
    if variant not in variants:
        problems.append("define_from_variant of unknown variant %s" % variant)

# What CMakeLists.txt finds -> the Spack package that provides it.
found = set(re.findall(r"find_package\((\w+)", cmake)) | set(re.findall(r"pkg_check_modules\(\w+ [A-Z ]*IMPORTED_TARGET ([\w+-]+)", cmake))
provider = {"Boost": "boost", "PkgConfig": "pkgconfig", "tomlplusplus": "tomlplusplus",
            "HDF5": "hdf5", "MPI": "mpi", "pmix": "pmix", "hdf5-openmpi": "hdf5",
            "CUDAToolkit": "cuda", "benchmark": None, "ZLIB": "zlib-api"}
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
if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print("spack recipe: valid Python; variants %s map one to one onto %s; depends_on %s"
      % (sorted(mapped), sorted(options), sorted(depends)))
