#!/usr/bin/env bash
# usage: ci_run.sh N [busy] : fresh clone of /work/main at HEAD into /tmp/ciN, .ci/run timed, timeline + sampler
N=$1; MODE=${2:-quiet}
rm -rf /tmp/ci$N; git clone -q /work/main /tmp/ci$N; cd /tmp/ci$N
commit=$(git log -1 --format=%h)
rm -f /tmp/tl$N.jsonl
if [ "$MODE" = busy ]; then bash -c 'while :; do :; done' & BUSY=$!; fi
if [ "${SAMPLE:-0}" = 1 ]; then python3 /work/notes/cpusampler.py /tmp/cpu$N.json & SAMP=$!; fi
s=$(date +%s.%N)
GPUCOMM_TEST_TIMELINE=/tmp/tl$N.jsonl bash .ci/run > /tmp/ci$N.log 2>&1; rc=$?
e=$(date +%s.%N)
[ -n "$BUSY" ] && kill $BUSY
[ -n "$SAMP" ] && kill -TERM $SAMP && sleep 1
printf "%.2f s\nrc=%s commit=%s mode=%s\n" $(echo "$e - $s" | bc) $rc $commit $MODE >> /tmp/ci$N.log
tail -3 /tmp/ci$N.log
