#!/bin/bash
CG=${CG:?the memory cgroup (v1) this shell is in, e.g. /sys/fs/cgroup/memory/$(sed -n "s/^[0-9]*:memory://p" /proc/self/cgroup)}
mkdir $CG/gpucomm55 && echo $((6 << 30)) > $CG/gpucomm55/memory.limit_in_bytes
echo $$ > $CG/gpucomm55/cgroup.procs
cd "$(git rev-parse --show-toplevel)"
export RFM_CONFIG_FILES=$PWD/config/settings.py RFM_ENABLE_RESULTS_STORAGE=n OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
. .venv/bin/activate
rm -rf /tmp/cg55run; mkdir /tmp/cg55run
/usr/bin/time -v nice -n 19 timeout 1200 reframe -c checks/ -r --prefix /tmp/cg55run --report-file /tmp/cg55run/report.json > /tmp/cg55run.log 2>&1
echo "rc=$?" >> /tmp/cg55run.log
echo $$ > $CG/cgroup.procs
rmdir $CG/gpucomm55
