#!/usr/bin/env bash
# What numpy costs one of the tests' ReFrame sessions (a small dry run of the ping-pong check):
# the session as it is (numpy no longer imported by gpucomm.metrics), and the same with numpy
# imported first, as gpucomm.metrics did before 6f28181.  5 runs each, alternating; CPU seconds
# (user+sys, /usr/bin/time).  From the repository root, the venv in .venv:
#   bash bench/results/2026-12-03-cpu-2core/44-ci-timings/numpy-in-session.sh
set -euo pipefail
prefix=$(mktemp -d /tmp/gpucomm-numpy-session.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
for i in 1 2 3 4 5; do
    for pre in "" "import numpy; "; do
        /usr/bin/time -f "${pre:-without numpy: }%U+%S CPU-s" .venv/bin/python -c "${pre}import sys
sys.path.insert(0, 'tests'); import reframe_fast; reframe_fast.install()
from reframe.frontend.cli import main; sys.argv[0] = 'reframe'; sys.exit(main())" \
            -C config/settings.py -c checks/pingpong.py -n '^PingPongCheck%method=host' --dry-run \
            --prefix "$prefix" >/dev/null
    done
done
