#!/usr/bin/env python3
"""summary.md of command.sh's raw/ folder: per round, at 8 B, the median (and min) of osu_latency's
block averages (one per launch of -i 2000) and of the payload's samples of 2000 iterations
(--batch 2000) per loop, and the payload's median with its default batch of 20; then the
medians over the rounds and the gaps to OSU."""
import json
import statistics
import sys
from pathlib import Path

raw = Path(sys.argv[1] if len(sys.argv) > 1 else "raw")
LOOPS = ("mpi4py", "numba-mpi")


def osu(path):  # every "8   <avg>" row: one block average per launch
    return [float(p[1]) for p in (line.split() for line in path.read_text().splitlines())
            if len(p) == 2 and p[0] == "8"]


def payload(path):
    for line in path.read_text().splitlines():
        if line.startswith("GPUCOMM-RESULT "):
            rec = json.loads(line.split(" ", 1)[1])
            return rec["time_us"], rec.get("timed_loop"), rec["batch"], rec["samples"]
    raise SystemExit(f"{path}: no record")


rounds = sorted(int(p.name.split(".")[1]) for p in raw.glob("osu.*.txt"))
head = ["round", "osu_latency: median (min) of block averages"]
head += [f"{loop} --batch 2000: median (min)" for loop in LOOPS] + [f"{loop} batch 20: median" for loop in LOOPS]
lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
cols = {k: [] for k in ["osu"] + [f"{loop}-2000" for loop in LOOPS] + [f"{loop}-20" for loop in LOOPS]}
for r in rounds:
    o = osu(raw / f"osu.{r}.txt")
    cells = [f"{statistics.median(o):.3f} ({min(o):.2f}, {len(o)} blocks)"]
    cols["osu"].append(statistics.median(o))
    for batch in (2000, 20):
        for loop in LOOPS:
            t, ran, b, samples = payload(raw / f"{loop}-batch{batch}.{r}.txt")
            assert ran == loop and b == batch, (r, loop, ran, b)
            cols[f"{loop}-{batch}"].append(t["median"])
            cells.append(f"{t['median']:.3f} ({t['min']:.3f})" if batch == 2000 else f"{t['median']:.3f}")
    lines.append(f"| {r} | " + " | ".join(cells) + " |")
med = {k: statistics.median(v) for k, v in cols.items()}
lines += ["", f"Medians over {len(rounds)} rounds, 8 B, us per half round trip:", "",
          f"- osu_latency (block averages of 2000): {med['osu']:.3f}"]
for loop in LOOPS:
    lines.append(f"- payload, {loop} loop: {med[loop + '-2000']:.3f} with --batch 2000 "
                 f"(gap to OSU {med[loop + '-2000'] - med['osu']:+.3f}); {med[loop + '-20']:.3f} with batch 20 "
                 f"(gap {med[loop + '-20'] - med['osu']:+.3f})")
print("\n".join(lines))
