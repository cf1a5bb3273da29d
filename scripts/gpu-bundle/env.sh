# shellcheck shell=bash
# . gdrbench-gpubundle/env.sh: the bundle's relocated Debian Open MPI 4.1.4 and rdma-core first
# (what gdrbench's binaries were built with), NCCL from the node (never carried: over 200 MB),
# libcudart.so.13 from the node where it has one, else the bundle's copy.
# cuda_mpi_env (below) switches a subshell to the bundle's CUDA-aware Open MPI and UCX.
B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
L=$B/sys/usr/lib/x86_64-linux-gnu
export PATH=$B/sys/usr/bin:$B/sys/bin:$B/sys/sbin:$PATH
export LD_LIBRARY_PATH=$L:$L/libibverbs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$B/sys/usr OPAL_SYSCONFDIR=$B/sys/etc/openmpi
export PMIX_MCA_mca_base_component_path=$L/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
export MPIRUN=$B/sys/usr/bin/mpirun
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_mca_base_component_show_load_errors=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export IBV_DRIVERS=rxe:mlx5:siw
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
[[ -n $nccl_lib && -d $nccl_lib ]] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$nccl_lib
if ! ldd "$B/build/bench/gdrb_copy_bw" 2>/dev/null | grep -q 'libcudart.so.13 => /'; then
	export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$B/cudart
fi
unset nccl_lib

# The simulated GPU and NCCL of a rehearsal come before everything else.
if [[ -n ${SIMGPU_DRYRUN:-} ]]; then
	export LD_LIBRARY_PATH=$SIMGPU_DRYRUN:$LD_LIBRARY_PATH SIMGPU_COPY_GBPS=${SIMGPU_COPY_GBPS:-25}
fi
if [[ -n ${SIMNCCL_DRYRUN:-} ]]; then
	export LD_LIBRARY_PATH=$SIMNCCL_DRYRUN:$LD_LIBRARY_PATH
fi

# The CUDA-aware Open MPI (tools/ompi, same ABI as Debian's 4.1.4, so gdrbench's binaries run on
# it unchanged) over UCX with CUDA (tools/ucx): returns 1 where the bundle does not carry it.
cuda_mpi_env() {
	[[ -x $B/tools/ompi/bin/mpirun ]] || return 1
	export PATH=$B/tools/ompi/bin:$B/tools/ucx/bin:$PATH
	export LD_LIBRARY_PATH=$B/tools/ompi/lib:$B/tools/ucx/lib:$LD_LIBRARY_PATH
	export OPAL_PREFIX=$B/tools/ompi MPIRUN=$B/tools/ompi/bin/mpirun
	unset OPAL_SYSCONFDIR PMIX_MCA_mca_base_component_path OMPI_MCA_btl
	# pml ucx on whatever transports UCX has (Open MPI 4.1 otherwise wants verbs or cuda_ipc and,
	# on a node with neither, refuses the PML)
	export OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any
	return 0
}
