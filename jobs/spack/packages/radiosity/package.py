# A Spack package for radiosity, from a checkout of this repository (no release is published yet):
#
#   spack repo add jobs/spack
#   spack dev-build radiosity@0.1.0 +petsc          (in the repository root; +cuda cuda_arch=90 for GPUs)
#
# It builds with CMake as jobs/setup.sh does and installs with `cmake --install` (executable, library, headers,
# find_package(radiosity)). Checked here against CMakeLists.txt by tests/cli/test_container.py (the CMake options
# it passes exist); Spack itself was not available to run it.
from spack.package import *


class Radiosity(CMakePackage, CudaPackage):
    """Form factors (view factors) with exact occlusion, diffuse radiosity and gray-body radiative heat transfer,
    on MPI ranks (Embree on the CPU cores, CUDA on GPUs), with parallel HDF5 output."""

    version("0.1.0")

    variant("petsc", default=True, description="Krylov solvers through PETSc (--solver gmres)")

    depends_on("cmake@3.24:", type="build")
    depends_on("mpi")
    depends_on("hdf5@1.10:+mpi")
    depends_on("embree@3:4")  # CMake takes the one Spack provides (RAD_EMBREE=auto)
    depends_on("tbb")
    depends_on("cli11")
    depends_on("tinyobjloader")
    depends_on("tinyexr")
    depends_on("stb")
    depends_on("nlohmann-json@3:")
    depends_on("assimp@5:")
    depends_on("petsc+mpi~complex", when="+petsc")
    depends_on("googletest", type="test")

    def cmake_args(self):
        args = [
            self.define_from_variant("RAD_ENABLE_CUDA", "cuda"),
            self.define_from_variant("RAD_ENABLE_PETSC", "petsc"),
            self.define("RAD_BUILD_TESTS", self.run_tests),
        ]
        if self.spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CUDA_ARCHITECTURES", self.spec.variants["cuda_arch"].value))
        return args
