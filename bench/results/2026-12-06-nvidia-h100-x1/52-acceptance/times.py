"""ReFrame's own times of each acceptance session here (time_run per test case, the session's
elapsed) and, from each job's gpucomm_results.json, the payload's wall seconds per size: how
much of a repeat the sizes of 64 MiB and up take.  Usage (repository root):
    python bench/results/2026-12-06-nvidia-h100-x1/52-acceptance/times.py"""

import glob
import json
import os
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BIG = 64 << 20


def session(tgz, into):
    with tarfile.open(tgz) as tar:
        tar.extractall(into, filter="data")
    rep = json.load(open(os.path.join(into, "acceptance.json")))
    cases = [c for run in rep["runs"] for c in run["testcases"] if c["result"] != "skip"]
    print(f"{os.path.relpath(tgz, HERE)}: elapsed {rep['session_info']['time_elapsed']:.1f} s, "
          f"time_run in all {sum(c.get('time_run') or 0 for c in cases):.1f} s")
    walls = {}
    for f in glob.glob(os.path.join(into, "rfm/output/*/*/*/*/*/gpucomm_results.json")):
        recs = json.load(open(f))["results"]
        walls[os.path.basename(os.path.dirname(f)).split("_")[0]] = (
            sum(r.get("wall_s") or 0 for r in recs), sum(r.get("wall_s") or 0 for r in recs if r["size"] >= BIG))
    for c in cases:
        name = c["name"].split()[0]
        total, big = walls.get(name, (None, None))
        sizes = f"; sizes' wall {total:.1f} s, of it >= 64 MiB {big:.1f} s" if total else ""
        print(f"  {c['result']:4} {c['display_name'].split(' %.repeat_no')[0]:30} time_run "
              f"{c.get('time_run') or 0:6.1f} s{sizes}")


def main():
    tgzs = sorted(glob.glob(os.path.join(HERE, "call*/s*.tgz")))
    if not tgzs:
        sys.exit(f"no call*/s*.tgz under {HERE}")
    for tgz in tgzs:
        with tempfile.TemporaryDirectory() as tmp:
            session(tgz, tmp)


if __name__ == "__main__":
    main()
