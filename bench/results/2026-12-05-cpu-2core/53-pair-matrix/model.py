"""The timing model of a node pair matrix's rounds (gpucomm.pairs.round_seconds) against the
rounds measured on the 4-node GPU cluster (bench/results/2026-12-03-nvidia-h200/
40-gpu-cluster-acceptance: ccl, 8 B and 1 MiB, soak on, --budget 0.3; each record's wall_s) and
the CI cluster's job (bench/results/2026-11-30-cpu-2core/02-cluster-4node: host, 8 B and 256 KiB,
5 iterations + 2 warm-up; its records have no wall_s, so its rounds are summed and set against
the job's 10.1 s, bench/results/2026-12-02-cpu-2core/30-acceptance-cluster-timing).
The link figures are each session's own: latency = the median 8 B round's half round trip,
bandwidth = 1 MiB (or 256 KiB) over its median round time less that latency.
Usage: python model.py REPO"""

import io
import json
import statistics
import sys
import tarfile
from pathlib import Path

from gpucomm.pairs import ROUND_FIXED_S, round_seconds

repo = Path(sys.argv[1])
GPU = repo / "bench/results/2026-12-03-nvidia-h200/40-gpu-cluster-acceptance/call"
CI = repo / "bench/results/2026-11-30-cpu-2core/02-cluster-4node/jobs/NodePairMatrixCheck_699d6639/gpucomm_results.json"


def link(recs, big):
    lat = statistics.median(r["time_us"]["median"] for r in recs if r["size"] == 8 and r["mode"] == "uni") * 1e-6
    t = statistics.median(r["time_us"]["median"] for r in recs if r["size"] == big and r["mode"] == "uni") * 1e-6
    return lat, big / (t - lat) / 1e9


def gpu_sessions():
    for name in ("pairs-healthy-outputs.tgz", "pairs-ggn3-shaped-outputs.tgz"):
        with tarfile.open(GPU / name) as tar:
            for m in tar.getmembers():
                if m.name.endswith("gpucomm_results.json"):
                    yield name.split("-outputs")[0], m.name.split("/")[-2], json.load(tar.extractfile(m))


errors = []
print("session job size mode round iters measured_s model_s error")
for session, job, doc in gpu_sessions():
    recs = [r for r in doc["results"] if r.get("scope") == "concurrent"]
    lat, bw = link(recs, 1 << 20)
    for r in recs:
        model = round_seconds(r["size"], r["mode"], lat, bw, iters=0, warmup=r["warmup"], budget=0.3, soak=True)
        err = model / r["wall_s"] - 1
        errors.append((r["round"], err))
        print(f"{session} {job} {r['size']} {r['mode']} {r['round']} {r['iters']} {r['wall_s']:.3f} {model:.3f} {err:+.1%}")
later = [abs(e) for rnd, e in errors if rnd > 0]
first = [abs(e) for rnd, e in errors if rnd == 0]
print(f"GPU cluster, {len(errors)} rounds (link {lat * 1e6:.0f} us, {bw:.2f} GB/s in the last session): "
      f"rounds after a size's first: median |error| {statistics.median(later):.1%}, max {max(later):.1%}; "
      f"a size's first round (its set-up, outside the model): median |error| {statistics.median(first):.1%}, "
      f"max {max(first):.1%}")

doc = json.load(open(CI))
recs = [r for r in doc["results"] if r.get("scope") == "concurrent"]
lat, bw = link(recs, 256 << 10)
total = 0.0
for r in recs:  # a round is as long as its slowest pair: the record's median is the slowest pair's
    t = r["time_us"]["median"] * 1e-6
    it = 2 * t if r["mode"] == "uni" else t
    total += ROUND_FIXED_S + (r["warmup"] + r["iters"]) * it
model = sum(round_seconds(r["size"], r["mode"], lat, bw, iters=5, warmup=2) for r in recs)
print(f"CI cluster, 12 rounds: the rounds' own medians give {total:.1f} s, the model at the session's link "
      f"({lat * 1e6:.0f} us, {bw * 1e3:.1f} MB/s) {model:.1f} s; the job took 10.1 s with its start "
      "(30-acceptance-cluster-timing; its start is not recorded apart)")
