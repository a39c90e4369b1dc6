# Spack package for mbspar (docs/cluster.md). Use it from a repository of your own:
#   spack repo create ~/spack-mbspar && cp -r packaging/spack/mbspar ~/spack-mbspar/packages/
#   spack repo add ~/spack-mbspar
#   spack install mbspar@main ^openmpi        (or: spack dev-build mbspar@main in a checkout)
# Written for this project (not copied from another package).

from spack.package import *


class Mbspar(CMakePackage):
    """Parallel dynamics of large articulated multibody systems (chains, trees, closed loops)
    with MPI + OpenMP: constraint forces solved exactly across ranks (schur), iterative and
    PETSc KSP solvers, PETSc TS integration, parallel HDF5/XDMF output."""

    homepage = "https://example.invalid/mbspar"
    git = "https://example.invalid/mbspar.git"

    maintainers("mbspar")
    license("MIT")

    version("main", branch="main")

    variant("petsc", default=True, description="PETSc KSP solver and TS integrators (mbspar run)")
    variant("hdf5", default=True, description="parallel HDF5 trajectory output")
    variant("hwloc", default=True, description="hwloc binding and topology report")
    variant("urdf", default=True, description="URDF robot input (libxml2)")

    depends_on("c", type="build")
    depends_on("cmake@3.20:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("libconfig")
    depends_on("petsc+mpi", when="+petsc")
    depends_on("hdf5+mpi", when="+hdf5")
    depends_on("hwloc", when="+hwloc")
    depends_on("libxml2", when="+urdf")

    def cmake_args(self):
        args = [
            self.define_from_variant("MBS_ENABLE_PETSC", "petsc"),
            self.define_from_variant("MBS_ENABLE_HDF5", "hdf5"),
            self.define_from_variant("MBS_ENABLE_HWLOC", "hwloc"),
            self.define_from_variant("MBS_ENABLE_URDF", "urdf"),
            self.define("MBS_BUILD_PEERS", False),
            self.define("CMAKE_C_COMPILER", self.spec["mpi"].mpicc),
        ]
        if self.spec.satisfies("+petsc"):
            # PETSc's pkg-config file under PETSC_DIR (no PETSC_ARCH in a Spack prefix)
            args.append(self.define("PETSC_DIR", self.spec["petsc"].prefix))
        if self.spec.satisfies("+hdf5"):
            args.append(self.define("HDF5_ROOT", self.spec["hdf5"].prefix))
        return args

    def check(self):
        # the quick unit tests only (the full suite runs for 25+ minutes)
        with working_dir(self.build_directory):
            ctest("-L", "unit", "-LE", "slow", "-R", "cli|config|install")
