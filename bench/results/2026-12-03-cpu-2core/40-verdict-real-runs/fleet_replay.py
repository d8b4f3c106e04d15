"""The fleet verdict (gpucomm acceptance) on real noise: the 26 committed healthy health sessions of
the reference node (local:h200x2, 2x H200; bench/results/2026-11-30-nvidia-h200-x2/{10-health,
12-health,13-health-validation}, the runs the shipped references come from) dealt out, seeded, as
N "nodes" x K repeats; a healthy deal, and the same deal with node n0 slower by LOSS on one
variable (its value x (1 - LOSS) for a bandwidth, / (1 - LOSS) for a time).  Counted per trial:
healthy nodes drained (false drains, per node verdict), n0 drained on the slowed variable
(detection), n0 a suspect.

    python fleet_replay.py OUT [--trials 200] [--nodes 6] [--k 4] [--loss 0.035,0.07]
        [--var 'HealthCheck %operation=allreduce:ccl_goodput_64MiB'] [--seed 1]

The sessions are one node's, from several device calls: the between-"node" spread here is the
spread between those calls (level shifts of a few per cent on some variables: 41-nightly-drift-
replay), which the deal spreads across the nodes.  10-health's ipc-copy ping-pong values are
left out (its signalling changed after them, as the shipped references do), and every session is cut
to the test cases and variables all 26 measured (``common``).
"""

import argparse
import copy
import glob
import json
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))
sys.path.insert(0, os.path.join(ROOT, "src"))

from gpucomm.analysis import acceptance  # noqa: E402

H200X2 = os.path.join(ROOT, "bench", "results", "2026-11-30-nvidia-h200-x2")
STUDY = ("10-health", "12-health", "13-health-validation")


def sessions():
    out = []
    for d in STUDY:
        for p in sorted(glob.glob(os.path.join(H200X2, d, "reports", "report-health-*.json"))):
            doc = json.load(open(p))
            cases = [t for r in doc["runs"] for t in r["testcases"]]
            if d == "10-health":
                for t in cases:
                    if "operation=pingpong" in t["display_name"]:
                        t["perfvalues"] = {k: v for k, v in (t.get("perfvalues") or {}).items()
                                           if not k.split(":")[-1].startswith("ipc-copy_")}
            out.append((p, cases))
    return common(out)


def common(found):
    """Every session cut to what all of them measured: the test cases that passed (or failed only
    their performance references) in every session, and their perf variables with a value in
    every session (the sessions come from a few trees of gpucomm; a fleet runs one)."""
    def usable(t):
        return t["result"] == "pass" or (t["result"] == "fail" and t.get("fail_phase") == "performance")

    def name(t):
        return t["display_name"].split(" /")[0]

    names = set.intersection(*({name(t) for t in cases if usable(t)} for _, cases in found))
    keys = set.intersection(*({(name(t), k.split(":")[-1]) for t in cases if name(t) in names
                               for k, v in (t.get("perfvalues") or {}).items() if v[0] is not None}
                              for _, cases in found))
    out = []
    for p, cases in found:
        kept = []
        for t in cases:
            if name(t) in names:
                t["perfvalues"] = {k: v for k, v in t["perfvalues"].items() if (name(t), k.split(":")[-1]) in keys}
                kept.append(t)
        out.append((p, kept))
    return out


def deal(all_sessions, order, n, k, slow=None):
    """A session report of n nodes x k repeats from sessions ``order``; ``slow``: (check, var, loss)
    applied to n0."""
    cases = []
    for i in range(n):
        for r in range(k):
            _, src = all_sessions[order[i * k + r]]
            for t in src:
                t = copy.deepcopy(t)
                name = t["display_name"].split(" /")[0]
                t["display_name"] = f"{name} %.part=local:h200x2 %.nid=n{i} %.repeat_no={r}"
                t["job_nodelist"] = [f"n{i}"]
                if slow and i == 0 and name == slow[0]:
                    for key, val in t["perfvalues"].items():
                        if key.split(":")[-1] == slow[1] and val[0] is not None:
                            f = (1 - slow[2]) if val[4] in ("GB/s",) else 1 / (1 - slow[2])
                            val[0] = val[0] * f
                cases.append(t)
    return {"session_info": {"uuid": "replay", "cmdline": "reframe -c checks/ --mode acceptance "
                             f"--distribute=all --repeat={k} -r"}, "runs": [{"testcases": cases}]}


def judge(doc, tmp):
    path = os.path.join(tmp, "s.json")
    with open(path, "w") as fp:
        json.dump(doc, fp)
    cases, perf = acceptance.read_sessions([path])
    return acceptance.evaluate(cases, perf)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=6)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--loss", default="0.035,0.07")
    ap.add_argument("--var", default="HealthCheck %operation=allreduce:ccl_goodput_64MiB")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    check, var = a.var.rsplit(":", 1)
    losses = [float(x) for x in a.loss.split(",")]
    all_s = sessions()
    assert a.nodes * a.k <= len(all_s), f"{len(all_s)} sessions, {a.nodes} x {a.k} asked"
    rng = np.random.default_rng(a.seed)
    stats = {"healthy": [0, 0, 0], **{f"{loss:g}": [0, 0, 0, 0] for loss in losses}}
    noise_rows = []
    log = open(os.path.join(a.out, f"replay-n{a.nodes}-k{a.k}.log"), "w")
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(a.trials):
            order = rng.permutation(len(all_s))
            v = judge(deal(all_s, order, a.nodes, a.k), tmp)
            drained = {r["node"] for r in v.drain}
            stats["healthy"][0] += len(drained)
            stats["healthy"][1] += a.nodes
            stats["healthy"][2] += len({r["node"] for r in v.suspects})
            if trial == 0:
                noise_rows = [r for r in v.noise if r["check"] == check and r["variable"] == var]
            for d in sorted(drained):
                print(f"trial {trial} healthy: drained {d}: "
                      + "; ".join(f"{r['check']} {r['reason']}" for r in v.drain if r["node"] == d), file=log)
            for loss in losses:
                v = judge(deal(all_s, order, a.nodes, a.k, (check, var, loss)), tmp)
                hit = any(r["node"] == "n0" and r.get("variable") == var and r["check"] == check for r in v.drain)
                others = {r["node"] for r in v.drain} - {"n0"}
                s = stats[f"{loss:g}"]
                s[0] += hit
                s[1] += len(others)
                s[2] += a.nodes - 1
                s[3] += any(r["node"] == "n0" for r in v.suspects)
    h = stats["healthy"]
    nvars = sum(len(t["perfvalues"]) for t in all_s[0][1])
    lines = [f"sessions: {len(all_s)} (26 healthy health-mode runs of local:h200x2), cut to the {len(all_s[0][1])} "
             f"test cases and {nvars} perf variables all of them measured; deal: {a.nodes} nodes x "
             f"{a.k} repeats, {a.trials} trials, seed {a.seed}; slowed: n0 {check} {var}",
             f"healthy deals: {h[0]} of {h[1]} node verdicts drained (false drains), {h[2]} suspects"]
    for loss in losses:
        s = stats[f"{loss:g}"]
        lines.append(f"n0 {loss:.1%} slower: drained on {var} in {s[0]} of {a.trials} trials ({s[0] / a.trials:.1%}); "
                     f"healthy nodes drained {s[1]} of {s[2]}; n0 suspect {s[3]}")
    for r in noise_rows:
        lines.append(f"noise.csv of trial 0, {var}: within {r['within']:.4f} ({r['within_source']}), between "
                     f"{r['between']:.4f} ({r['between_source']}), detectable loss {r['detectable_loss']:.1%}, "
                     f"verdict: {r['verdict']}")
    text = "\n".join(lines) + "\n"
    open(os.path.join(a.out, f"replay-n{a.nodes}-k{a.k}.txt"), "w").write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
