#!/bin/bash
# The node pair matrix of a 1,024-node batch, dry-run on Alps, Leonardo and LUMI over the Slurm
# stand-in (tests/slurm_standin): one job of all nodes (where the site takes it) and the groups'
# schedule (docs/acceptance.md step 2). Usage: dryrun.sh OUT [NODES] [GROUP]
set -u
out=${1:?OUT}; n=${2:-1024}; group=${3:-128}
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
py=${PYTHON:-/work/main/.venv/bin/python}
mkdir -p "$out"
last=$(printf 'nid%04d' "$n")
nodes=$(for i in $(seq 1 "$n"); do printf 'nid%04d:IDLE+RESERVED:normal,boost_usr_prod,standard-g ' "$i"; done)
jobs=$(PYTHONPATH=$repo/src "$py" -c "from gpucomm.pairs import group_jobs; print(len(group_jobs($n, $group)))")
export GPUCOMM_STANDIN_NODES="$nodes" GPUCOMM_STANDIN_RESERVATIONS="gpucomm-new=nid[0001-$(printf %04d "$n")]"
export PATH="$repo/tests/slurm_standin:$(dirname "$py"):$PATH" SBATCH_ACCOUNT=acct GPUCOMM_PYTHON=/v/bin/python
export RFM_RESOLVE_MODULE_CONFLICTS=n RFM_ENABLE_RESULTS_STORAGE=n PYTHONPATH=$repo/src
unset RFM_CONFIG_FILES
cd "$repo"
for system in alps leonardo lumi; do
  for form in one groups; do
    if [ $form = one ]; then
      sel=(-S PairMatrixCheck.num_nodes="$n")
    else
      sel=(-S PairMatrixCheck.group_size="$group" -P "PairMatrixCheck.group_job=$(seq -s, 0 $((jobs - 1)))")
    fi
    cmd=("$(dirname "$py")/reframe" -C config/settings.py --system "$system" -c checks/pairmatrix.py --mode acceptance-network
         -n PairMatrixCheck -S PairMatrixCheck.ranks_per_node=1 -S "PairMatrixCheck.nodelist=nid[0001-$(printf %04d "$n")]"
         "${sel[@]}" --dry-run --prefix "$out/$system-$form" --report-file "$out/$system-$form.json")
    rm -rf "$out/$system-$form"
    echo "== $system $form: ${cmd[*]}" | sed "s|$repo/||g"
    /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KB max RSS" "${cmd[@]}" > "$out/$system-$form.log" 2> "$out/$system-$form.time"
    echo "rc $?; $(tail -1 "$out/$system-$form.time")"
    grep -E "PASSED|FAILED|SKIP" "$out/$system-$form.log" | tail -2
  done
done
