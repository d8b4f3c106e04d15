#!/bin/bash
# 24 nightly-style sessions (gpucomm nightly --mode health, local:cpu, -S sizes=8) with a fault
# injected at random in half of them (each of 6 kinds twice), then gpucomm report over all;
# figures in summary.txt.  The kinds: reframe killed (kill -9), a killed rank, a hung rank, a
# corrupted byte, a full folder, and the nightly runner stopped (SIGTERM, a cron `timeout`)
# while a rank hangs.
#   bench/results/2026-12-03-cpu-2core/44-nightly-fault-soak/soak.sh WORK [SEED]
# WORK: scratch folder (sessions' outputs, not committed); run from the repository root with
# the venv's bin on PATH.  Needs root for the full-folder fault (a 256 KiB tmpfs, filled).
# N (env, default 24) sessions.
set -u
WORK=${1:?WORK folder}; SEED=${2:-44}; N=${N:-24}; HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"; WORK=$(cd "$WORK" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export RFM_ENABLE_RESULTS_STORAGE=y RFM_SQLITE_DB_FILE="$WORK/results.db"
unset $(env | grep -o '^GPUCOMM_TEST_[A-Z_]*') 2>/dev/null
FAULTS=(kill9 killed-rank hang corruption full-folder sigterm)
mapfile -t PLAN < <(python3 -c "
import random; r = random.Random($SEED); f = '${FAULTS[*]}'.split()
faulted = set(r.sample(range($N), $N // 2)); order = [f[i % len(f)] for i in range($N // 2)]; r.shuffle(order)
it = iter(order); print('\n'.join(next(it) if i in faulted else 'clean' for i in range($N)))")
ranks() {  # payload processes whose working folder is under $1
  local n=0; for p in $(pgrep -f 'gpucomm pingpong' || true); do
    case "$(readlink /proc/$p/cwd 2>/dev/null)" in "$1"*) n=$((n+1));; esac; done; echo $n; }
orphans() {  # gpucomm processes whose working folder is under WORK (other sessions' are not ours)
  local n=0; for p in $(pgrep -f 'gpucomm' || true); do
    case "$(readlink /proc/$p/cwd 2>/dev/null)" in "$WORK"*) n=$((n+1)); ps -o pid,ppid,etimes,args -p "$p" | tail -1 >> "$WORK/orphans.txt";; esac
  done; echo $n; }
: > "$WORK/sessions.tsv"
for i in $(seq 0 $(( N - 1 ))); do
  fault=${PLAN[$i]}; s=$(printf 's%02d' "$i"); out="$WORK/$s"; prefix="$WORK/$s-rfm"; envs=()
  args=(--mode health -S sizes=8 --prefix "$prefix")
  case $fault in
    killed-rank) envs=(GPUCOMM_TEST_HANG=1:8 GPUCOMM_TEST_HANG_EXIT=1);;
    hang)        envs=(GPUCOMM_TEST_HANG=1:8); args+=(-S time_limit=45s);;
    corruption)  envs=(GPUCOMM_TEST_CORRUPT=1:8);;
    sigterm)     envs=(GPUCOMM_TEST_HANG=1:8);;
    full-folder) mkdir -p "$out"; mount -t tmpfs -o size=256k tmpfs "$out"; prefix="$out/rfm"; args=(--mode health -S sizes=8 --prefix "$prefix")
                 mkdir -p "$prefix"; dd if=/dev/zero of="$out/filler" bs=4k 2>/dev/null;;  # the folder full
  esac
  t0=$(date +%s)
  if [ "$fault" = kill9 ]; then
    env "${envs[@]}" gpucomm nightly --out "$out" "${args[@]}" > "$WORK/$s.log" 2>&1 &
    nightly=$!; sleep 6
    rfm=$(pgrep -P "$nightly" | head -1); [ -n "$rfm" ] && kill -9 "$rfm"
    wait "$nightly"; rc=$?
  elif [ "$fault" = sigterm ]; then  # the runner stopped once both ranks run (one hung by the hook)
    env "${envs[@]}" gpucomm nightly --out "$out" "${args[@]}" > "$WORK/$s.log" 2>&1 &
    nightly=$!
    for _ in $(seq 120); do [ "$(ranks "$prefix")" -ge 2 ] && break; sleep 0.5; done
    sleep 1; kill -TERM "$nightly"; wait "$nightly"; rc=$?
  else
    env "${envs[@]}" gpucomm nightly --out "$out" "${args[@]}" > "$WORK/$s.log" 2>&1; rc=$?
  fi
  sleep 1; orph=$(orphans)
  reason=$( (grep -E '^gpucomm nightly: ' "$WORK/$s.log" | tail -1; grep -E '^gpucomm health: |\* Reason' "$WORK/$s.log" | head -2) | tr '\t\n' '  ' | cut -c1-300)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$fault" "$rc" "$(( $(date +%s) - t0 ))" "$orph" "$reason" | tee -a "$WORK/sessions.tsv"
  [ "$fault" = full-folder ] && { cp -r "$out" "$WORK/$s-full-copy" 2>/dev/null; umount "$out"; }
done
# every report still there and readable, then one report over all of them and the database
ls "$WORK"/s*/report.json > "$WORK/reports.txt" 2>/dev/null
gpucomm report "$WORK"/s*/report.json -o "$WORK/all-report" -q --paper none > "$WORK/all-report.txt" 2>&1; echo "report over all: rc $?" >> "$WORK/all-report.txt"
gpucomm report "$WORK/results.db" -o "$WORK/db-report" -q --paper none > "$WORK/db-report.txt" 2>&1; echo "report of results.db: rc $?" >> "$WORK/db-report.txt"
python3 "$HERE/summarise.py" "$WORK" | tee "$WORK/summary.txt"
