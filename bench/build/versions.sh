# The exact sources bench/build/*.sh build (sourced by them).  Each release tarball is checked
# against its sha256 before it is unpacked; the published checksums are the projects' own (and
# Spack's package recipes list the same ones).
OMPI_VERSION=5.0.7
OMPI_URL=https://download.open-mpi.org/release/open-mpi/v5.0/openmpi-5.0.7.tar.bz2
OMPI_SHA256=119f2009936a403334d0df3c0d74d5595a32d99497f9b1d41e90019fee2fc2dd
# the same release as Debian's source package openmpi 5.0.7-1 (orig tarball, recompressed by
# Debian): sha256 from its openmpi_5.0.7-1.dsc; `apt-get source --download-only openmpi=5.0.7-1`
# fetches it where Debian's archive is reachable and open-mpi.org is not
OMPI_DEBIAN_SHA256=97f10c04e9b9a1771db3fd005009e4c07afa3ce739f940e41eb0fc7397cb9473

OSU_VERSION=7.4
OSU_URL=https://mvapich.cse.ohio-state.edu/download/mvapich/osu-micro-benchmarks-7.4.tar.gz
OSU_SHA256=1edd0c2efa61999409bfb28740a7f39689a5b42b1a1b4c66d1656e5637f7cefc

NCCL_TESTS_VERSION=2.19.6
NCCL_TESTS_GIT=https://github.com/NVIDIA/nccl-tests.git
NCCL_TESTS_COMMIT=a0b82b2260cf5152b9f8c061bbf7eaf0ba096432   # tag v2.19.6

# Building Open MPI with CUDA on a machine without CUDA (bench/build/cuda-host.sh): the headers
# of the CUDA 13.0 the reference node has (nvcc 13.0.88, driver 580)
CUDA_WHEEL_VERSION=13.0.96          # nvidia-cuda-runtime (include/cuda.h)
CUDA_CRT_WHEEL_VERSION=13.0.88      # nvidia-cuda-crt (crt/host_defines.h ...)
CUDA_CCCL_WHEEL_VERSION=13.0.85     # nvidia-cuda-cccl (nv/target, which cuda_fp16.h includes: nccl.h for UCC)
# UCX for pml ucx (bench/build/ucx-prefix.sh): the libucx-cu13 wheel the zero-build MPI uses
UCX_WHEEL_VERSION=1.22.0
# NVML for UCC's TL CUDA (cuda-host.sh): nvml.h of the nvidia-nvml-dev wheel of CUDA 13.0 (driver
# 580's NVML), with a link stub generated from it
NVML_WHEEL_VERSION=13.0.87
# UCC for Open MPI's coll/ucc (bench/build/ucc.sh): tag v1.8.0, at this commit
UCC_VERSION=1.8.0
UCC_GIT=https://github.com/openucx/ucc.git
UCC_COMMIT=211e2f60436cba7c044195acb43752aa70eab38f   # tag v1.8.0
# the NCCL UCC's TL NCCL is built against: the nvidia-nccl-cu13 wheel the reference node has
NCCL_WHEEL_VERSION=2.28.9
# nvbandwidth (bench/build/nvbandwidth.sh): host <-> device and device-local copy bandwidth, by
# copy engine and by SM, the native side of the GPU data-path check; tag v0.8, at this commit
NVBANDWIDTH_VERSION=v0.8
NVBANDWIDTH_GIT=https://github.com/NVIDIA/nvbandwidth.git
NVBANDWIDTH_COMMIT=66746a3bef61c8c2e12ab34955310da70b9e38cb   # tag v0.8 (merge of PR 37)
# the Debian 12 packages of Boost.Program_options it builds against where the node has none
# (apt-get download them on a machine with apt; BOOST_DEBS=that folder)
NVBANDWIDTH_BOOST_DEBS="libboost-program-options1.74-dev libboost-program-options1.74.0 libboost1.74-dev"
