#!/bin/bash
# dry.sh SYSTEM NODES: the node-job dry run over the stand-in's reservation of NODES nodes, --repeat=5
. /tmp/i53env.sh; mk $2; P=/tmp/i53p/$1-$2; rm -rf $P
/usr/bin/time -f "time: %e s wall, %U s user, %S s sys, %M KB max RSS" python -c "import sys; from reframe.frontend.cli import main; sys.argv[0] = 'reframe'; sys.exit(main())" -C config/settings.py --system $1 -c checks/ --mode acceptance-node --distribute=avail -J reservation=gpucomm-new --repeat=5 --dry-run --prefix $P --report-file $P/report.json > $P.log 2>&1
echo "rc=$?" >> $P.log
python3 -c "
import json,sys,collections
d=json.load(open('$P/report.json')); c=d['runs'][0]['testcases']
print('$1 $2 nodes: test cases', len(c), dict(collections.Counter(x['result'] for x in c)), 'jobs (job scripts)', sum(1 for x in c if x['result']=='pass'))
" >> $P.log
grep -E "acceptance plan|time:|rc=|test cases|PASSED|FAILED" $P.log
