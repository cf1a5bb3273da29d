# Spack package for gdrbench (docs/install.md, "Spack"). Each variant maps to one of
# configure's --with-X / --without-X options (gnuplot: a run-time dependency only);
# tests/meta/pkgmgr.sh checks that they agree.
# The version's sha256 is the release tarball's: scripts/lib/set-release-checksum updates it.

import spack
from spack.package import *


class Gdrbench(AutotoolsPackage):
    """GPU / RDMA / MPI latency and bandwidth microbenchmarks: the direct (GPUDirect RDMA,
    CUDA-aware MPI) and staged (pinned bounce buffer) paths measured side by side, gdrb_doctor's
    diagnosis of a node, and `gdrb sweep` turning a profile into results, plots, a report and a
    pass/fail verdict."""

    # No public site yet: README.md in the tarball says what gdrbench is; the tarball comes from a
    # mirror (spack mirror add) until there is one.
    homepage = "https://gdrbench.invalid/"
    url = "https://gdrbench.invalid/releases/gdrbench-0.1.0.tar.gz"

    version("0.1.0", sha256="cbb5d323c60e3093b771fae34749e70b488a1819c095a45a2cfdc64bdc79e35b")

    variant("mpi", default=True, description="MPI benchmarks (gdrb_mpi_*) and gdrb sweep's launcher")
    variant("verbs", default=True, description="rdma-core verbs benchmarks (gdrb_write_bw, ...)")
    variant("cuda", default=False, description="device memory through the CUDA runtime")
    variant("nccl", default=False, description="NCCL benchmarks (gdrb_nccl_*); needs +cuda +mpi")
    variant("hwloc", default=True, description="GPU-NIC topology from hwloc")
    variant("gnuplot", default=False, description="gnuplot at run time for gdrb plot's figures")

    conflicts("+nccl", when="~cuda", msg="the NCCL benchmarks need +cuda")
    conflicts("+nccl", when="~mpi", msg="the NCCL benchmarks need +mpi")

    # Spack 1.0 builds with a compiler only where a package depends on its language; 0.x has no
    # "c" package to depend on.
    if getattr(spack, "spack_version_info", (1,)) >= (1,):
        depends_on("c", type="build")
    depends_on("pkgconfig", type="build", when="+hwloc")
    depends_on("mpi", when="+mpi")
    depends_on("rdma-core", when="+verbs")
    depends_on("cuda", when="+cuda")
    depends_on("nccl", when="+nccl")
    depends_on("hwloc", when="+hwloc")
    depends_on("python@3.8:", type="run")
    depends_on("gnuplot", type="run", when="+gnuplot")
    depends_on("check", type="test")

    # The variants that are configure's --with-X[=DIR] / --without-X, and what DIR each is given.
    def configure_args(self):
        args = []
        for name in ("mpi", "verbs", "cuda", "nccl", "hwloc"):
            if self.spec.satisfies("+" + name):
                args.append("--with-{0}={1}".format(name, self._configure_dir(name)))
            else:
                args.append("--without-" + name)
        return args

    def _configure_dir(self, name):
        if name == "mpi":
            return self.spec["mpi"].mpicc
        if name == "verbs":
            return self.spec["rdma-core"].prefix
        return self.spec[name].prefix

    def install(self, spec, prefix):
        make("install", "PYTHON3=" + spec["python"].command.path)

    def check(self):
        # The unit tests only: the whole suite takes half an hour and a soft-RoCE VM.
        make("check-unit")

    def installcheck(self):
        make("installcheck")
