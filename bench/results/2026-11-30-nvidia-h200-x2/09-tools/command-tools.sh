#!/usr/bin/env bash
# One device call on the 2-GPU node for issues 6, 8 and 9 (the order keeps timing runs off a
# busy CPU): the native tools are built by the ignored ext/ scripts (not part of this
# repository) while the fault injections run, then bench/compare (payload vs native,
# alternating), then the native checks under ReFrame and nccl-tests -J captures.
# Usage (repository root, after `source bench/device-env.sh`, ext/ carried): bench/h200x2-tools.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out"; out=$(cd "$out" && pwd)
py=$(command -v python3)
ms() { date +%s%N | cut -b1-13; }
t0=$(ms)
( bash ext/build-nccl-tests.sh > "$out/build.log" 2>&1; echo "nccl-tests build rc=$?" >> "$out/build.log"
  NCCL_HOME=/tmp/ncclh CUDA_HOME=/usr/local/cuda NVCCFLAGS="-gencode=arch=compute_90,code=sm_90" bash ext/build-osu.sh /tmp/osu cuda+nccl >> "$out/build.log" 2>&1
  echo "OSU build rc=$?" >> "$out/build.log" ) &
build=$!
bench/h200x2-faults.sh "$out/faults" > /dev/null 2>&1
wait $build
echo "builds and faults: $(( $(ms) - t0 )) ms" >> "$out/walltimes.txt"
export GPUCOMM_OSU_DIR=/tmp/osu GPUCOMM_NCCL_TESTS_DIR=/tmp/nccl-tests-build
t1=$(ms)
timeout 160 $py bench/compare --out "$out/compare" --repeats 3 --only ipc-copy,ccl-pingpong,ccl-allreduce,gpu-aware-mpi \
    --sizes 8,64M,256M,1G --iters 100 --warmup 10 --timeout 40 > "$out/compare.log" 2>&1
timeout 40 $py bench/compare --out "$out/compare-host" --repeats 3 --only host --sizes 8,64M --iters 200 --warmup 20 \
    --timeout 20 >> "$out/compare.log" 2>&1
echo "compare: $(( $(ms) - t1 )) ms" >> "$out/walltimes.txt"
t2=$(ms)
timeout 160 $py "$(command -v reframe)" -C config/settings.py -c checks/native.py -r -S iters=20 -S warmup=2 \
    --report-file "$out/report-native.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$out/reframe-native.log"
echo "native checks: $(( $(ms) - t2 )) ms" >> "$out/walltimes.txt"
mpiopts=$($py -c "from gpucomm.probe import node_info; from gpucomm.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))")
mkdir -p "$out/json"
for t in sendrecv all_reduce; do
  timeout 30 mpirun -np 2 $mpiopts /tmp/nccl-tests-build/${t}_perf -b 8 -e 1G -f 4 -g 1 -c 1 -n 20 -w 2 \
      -J "$out/json/nccl-tests_${t}_mpi.json" > "$out/json/nccl-tests_${t}_mpi.txt" 2>&1
done
cp -r output "$out/rfm-output"
cp "$out/faults/faults.log" "$out/compare/compare.md" "$out/" 2>/dev/null
cp "$out/compare-host/compare.md" "$out/compare-host.md" 2>/dev/null
tar czf "$out/native-data.tgz" -C "$out" json rfm-output faults compare compare-host compare.log &&
  rm -rf "$out/json" "$out/rfm-output" "$out/faults" "$out/compare" "$out/compare-host" "$out/compare.log"
echo "total: $(( $(ms) - t0 )) ms" >> "$out/walltimes.txt"
