#!/bin/bash
# Issue 55's proof: the README's main command, as a new user types it, on a fresh clone, inside a
# cgroup v1 memory cgroup of 6 GiB, at nice 19 beside other work; the install timed with it.
#   CG=/sys/fs/cgroup/memory/<this shell's memory cgroup> bash run.sh REPO OUT
CG=${CG:?the memory cgroup (v1) this shell is in, e.g. /sys/fs/cgroup/memory/$(sed -n "s/^[0-9]*:memory://p" /proc/self/cgroup)}
REPO=${1:?the repository to clone} OUT=${2:?OUT}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
mkdir $CG/gpucomm55 && echo $((6 << 30)) > $CG/gpucomm55/memory.limit_in_bytes
echo $$ > $CG/gpucomm55/cgroup.procs
rm -rf /tmp/fresh55 && git clone -q "$REPO" /tmp/fresh55 && cd /tmp/fresh55 || exit 1
git log --oneline -1 > "$OUT/commit.txt"
export RFM_ENABLE_RESULTS_STORAGE=n OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# the README's lines, as written there
/usr/bin/time -v nice -n 19 bash -c "python3 -m venv .venv && .venv/bin/pip install -q -e '.[mpi,rfm]' && . .venv/bin/activate &&
  export RFM_CONFIG_FILES=\$PWD/config/settings.py && reframe -c checks/ -r" > "$OUT/readme.log" 2>&1
echo "rc=$?" >> "$OUT/readme.log"
cat $CG/gpucomm55/memory.max_usage_in_bytes $CG/gpucomm55/memory.failcnt > "$OUT/cgroup.txt"
grep -h "default sweep stops" -r /tmp/fresh55/output 2>/dev/null | sort -u > "$OUT/capped.txt"
echo $$ > $CG/cgroup.procs
rmdir $CG/gpucomm55
