"""The before/after table of run.sh's launches: per (operation, path, size) the launches, the
launch-to-launch spread (sd of the natural log of the launch medians, in %), and the medians
over launches of each launch's p05, median and p95 (us).  Usage: python3 summarize.py DIR
(DIR holds ab-*.log, or logs.tgz)."""

import json
import math
import statistics
import sys
import tarfile
from collections import defaultdict
from pathlib import Path


def _logs(folder):
    folder = Path(folder)
    found = {p.name: p.read_text() for p in folder.glob("ab-*.log")}
    if not found and (folder / "logs.tgz").exists():
        with tarfile.open(folder / "logs.tgz") as tar:
            for m in tar.getmembers():
                if m.name.startswith("ab-"):
                    found[m.name] = tar.extractfile(m).read().decode()
    return found


def main(folder):
    rows = defaultdict(list)
    failed = []
    for name, text in sorted(_logs(folder).items()):
        path = name.split("-")[2]
        recs = [json.loads(ln.split(" ", 1)[1]) for ln in text.splitlines() if ln.startswith("GPUCOMM-RESULT")]
        if not recs:
            failed.append(name)
        for r in recs:
            rows[(r["op"], r["size"], path)].append(r)
    print("| op | size | path | timer | graph | launches | spread (sd log) | p05 | median | p95 | samples "
          "| warmup | validated |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (op, size, path), recs in sorted(rows.items()):
        med = [r["time_us"]["median"] for r in recs]
        sd = statistics.stdev([math.log(m) for m in med]) * 100 if len(med) > 1 else float("nan")
        q = {k: statistics.median(r["time_us"][k] for r in recs) for k in ("p05", "median", "p95")}
        print(f"| {op} | {size} | {path} | {recs[0]['timer']} | {recs[0]['graph']} | {len(recs)} | {sd:.2f} % | "
              f"{q['p05']:.2f} | {q['median']:.2f} | {q['p95']:.2f} | "
              f"{statistics.median(r['samples'] for r in recs):.0f} | "
              f"{recs[0]['warmup']} | {all(r['validated'] for r in recs)} |")
    if failed:
        print("launches without records:", ", ".join(failed))


if __name__ == "__main__":
    main(sys.argv[1])
