#!/usr/bin/env python3
"""Deployment files (issue 18): the Slurm scripts with a container image, the Apptainer definition, the Spack package.

Apptainer and Spack are not installed here, so each is checked as far as this machine allows:
  - `RAD_CONTAINER=IMAGE` makes jobs/slurm/formfactors.sbatch (local mode: mpirun, 2 ranks) run every rank as
    `$RAD_APPTAINER exec --bind <results>,<repository>,<working folder> IMAGE radiosity formfactors ...`; a stand-in
    for apptainer records each call and runs the built program, and the job's outputs are the same F as without
    the image; a missing image, or a missing apptainer, is refused with exit 2 and one line;
  - jobs/container/radiosity.def bootstraps Debian 12, builds through jobs/setup.sh without the test tools and
    installs with `cmake --install` (what the install_package test runs), and its %test runs the program;
  - jobs/spack/packages/radiosity/package.py, loaded against a stand-in for Spack's API, passes CMake only options
    that CMakeLists.txt declares, and maps +cuda/+petsc onto them.

Environment: as test_cli.py (RAD_EXE, RAD_MPIEXEC, RAD_SOURCE_DIR).
Run:  RAD_EXE=build/radiosity /usr/bin/python3 tests/cli/test_container.py [-v]
"""

import glob
import os
import re
import stat
import subprocess
import sys
import types

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
from test_cli import CliTestCase  # noqa: E402

ROOT = test_cli.SOURCE_DIR


class TestContainer(CliTestCase):
    def fake_apptainer(self):
        """A stand-in for apptainer: records its arguments, then runs what follows the image with the built
        program in place of the image's `radiosity`."""
        log = self.path("apptainer.log")
        path = self.path("apptainer")
        with open(path, "w") as fh:
            fh.write("#!/bin/bash\n"
                     "echo \"$*\" >> %s\n"
                     "[ \"$1\" = exec ] || exit 9\n"
                     "shift\n"
                     "while [ $# -gt 0 ] && [ \"${1%%.sif}\" = \"$1\" ]; do shift; done\n"
                     "shift\n"
                     "[ \"$1\" = radiosity ] || exit 8\n"
                     "shift\n"
                     "exec %s \"$@\"\n" % (log, test_cli.EXE))
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        return path, log

    def sbatch(self, env_extra, name):
        env = dict(test_cli.ENV, RAD_NTASKS="2", RAD_ROOT=ROOT, RAD_RESULTS_ROOT=self.path("results"),
                   RAD_JOB_NAME=name, **env_extra)
        return subprocess.run(["bash", os.path.join(ROOT, "jobs", "slurm", "formfactors.sbatch"), "--input",
                               os.path.join(test_cli.MESHES, "cornell_box.obj"), "--subdiv", "1", "--quiet"],
                              cwd=self.tmp, env=env, capture_output=True, universal_newlines=True, timeout=600)

    def test_slurm_scripts_run_the_ranks_in_the_image(self):
        apptainer, log = self.fake_apptainer()
        image = self.path("radiosity.sif")
        with open(image, "w") as fh:
            fh.write("an image")
        proc = self.sbatch({"RAD_CONTAINER": image, "RAD_APPTAINER": apptainer, "RAD_EXE": "radiosity"}, "boxed")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        with open(log) as fh:
            calls = fh.read().splitlines()
        ranks = [c for c in calls if " formfactors " in c]
        self.assertEqual(len(ranks), 2, calls)
        results = glob.glob(self.path("results/boxed-*"))[0]
        for call in ranks:
            self.assertTrue(call.startswith("exec --bind %s,%s,%s %s radiosity formfactors"
                                            % (results, ROOT, self.tmp, image)), call)
        with open(os.path.join(results, "command.txt")) as fh:
            self.assertIn(apptainer, fh.read())
        plain = self.sbatch({"RAD_EXE": os.path.abspath(test_cli.EXE)}, "plain")
        self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
        plain_results = glob.glob(self.path("results/plain-*"))[0]
        with h5py.File(os.path.join(results, "formfactors.h5"), "r") as a, \
                h5py.File(os.path.join(plain_results, "formfactors.h5"), "r") as b:
            self.assertTrue(np.array_equal(a["formfactors/F"][...], b["formfactors/F"][...]))

        for env, words in (({"RAD_CONTAINER": self.path("missing.sif"), "RAD_APPTAINER": apptainer}, "is not a file"),
                           ({"RAD_CONTAINER": image, "RAD_APPTAINER": self.path("no-apptainer")}, "not found")):
            proc = self.sbatch(env, "refused")
            self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
            self.assertIn(words, proc.stderr)

    def test_apptainer_definition(self):
        with open(os.path.join(ROOT, "jobs", "container", "radiosity.def")) as fh:
            text = fh.read()
        header = dict(re.findall(r"^(Bootstrap|From):\s*(\S+)", text, re.M))
        self.assertEqual(header, {"Bootstrap": "docker", "From": "debian:12"})
        sections = dict(re.findall(r"^%(\w+)\n(.*?)(?=^%|\Z)", text, re.M | re.S))
        self.assertEqual(sorted(sections), ["environment", "files", "labels", "post", "runscript", "test"])
        self.assertIn("RAD_SETUP_TEST_TOOLS=0", sections["post"])
        self.assertIn("bash jobs/setup.sh", sections["post"])
        self.assertIn("cmake --install /opt/radiosity-build --prefix /opt/radiosity", sections["post"])
        self.assertIn("/opt/radiosity/bin", sections["environment"])
        self.assertIn("radiosity --version", sections["test"])
        # The %post script is valid shell, and setup.sh knows the variable it sets.
        check = subprocess.run(["bash", "-n"], input=sections["post"], universal_newlines=True, capture_output=True)
        self.assertEqual(check.returncode, 0, check.stderr)
        with open(os.path.join(ROOT, "jobs", "setup.sh")) as fh:
            self.assertIn("RAD_SETUP_TEST_TOOLS", fh.read())

    def test_spack_package(self):
        defined = []

        class Spec:
            def __init__(self, variants):
                self.variants = {k: types.SimpleNamespace(value=v) for k, v in variants.items()}

            def satisfies(self, what):
                return self.variants[what[1:]].value is True

        class Package:
            def define(self, name, value):
                defined.append(name)
                return "-D%s=%s" % (name, "ON" if value is True else "OFF" if value is False else value)

            def define_from_variant(self, name, variant):
                return self.define(name, self.spec.variants[variant].value)

        api = types.ModuleType("spack.package")
        api.CMakePackage = Package
        api.CudaPackage = type("CudaPackage", (), {})
        for directive in ("version", "variant", "depends_on", "conflicts", "maintainers", "license"):
            setattr(api, directive, lambda *a, **k: None)
        sys.modules["spack"] = types.ModuleType("spack")
        sys.modules["spack.package"] = api
        path = os.path.join(ROOT, "jobs", "spack", "packages", "radiosity", "package.py")
        namespace = {}
        with open(path) as fh:
            exec(compile(fh.read(), path, "exec"), namespace)
        package = namespace["Radiosity"]()
        package.run_tests = False
        package.spec = Spec({"cuda": True, "petsc": False, "cuda_arch": "90"})
        args = package.cmake_args()
        self.assertIn("-DRAD_ENABLE_CUDA=ON", args)
        self.assertIn("-DRAD_ENABLE_PETSC=OFF", args)
        self.assertIn("-DCMAKE_CUDA_ARCHITECTURES=90", args)
        with open(os.path.join(ROOT, "CMakeLists.txt")) as fh:
            cmake = fh.read()
        for name in defined:
            if not name.startswith("CMAKE_"):
                self.assertRegex(cmake, r"option\(%s\b" % name, "package.py passes %s, which CMakeLists.txt lacks" % name)


if __name__ == "__main__":
    sys.exit(test_cli.run_tests(__file__))
