"""Where a pytest run's wall time went, from GPUCOMM_TEST_TIMELINE's file (tests/conftest.py):
python3 .ci/timeline.py FILE [N] -- the span, each worker's busy and idle time, the seconds
during which k workers were running a test, and the N longest tests (setup + call + teardown,
the setup's share shown: a setup that only waits is a lock, tests/machine.py)."""

import collections
import json
import sys


def main(path, top=25):
    phases = [json.loads(line) for line in open(path) if line.strip()]
    start = min(p["start"] for p in phases)
    stop = max(p["stop"] for p in phases)
    tests = collections.defaultdict(lambda: {"setup": 0.0, "call": 0.0, "teardown": 0.0})
    workers = collections.defaultdict(list)
    cpu = collections.Counter()  # test -> CPU seconds (the worker's, and its children's, deltas)
    last_cpu = {}
    for p in sorted(phases, key=lambda p: p["stop"]):
        tests[(p["worker"], p["test"])][p["phase"]] += p["stop"] - p["start"]
        workers[p["worker"]].append((p["start"], p["stop"]))
        if "cpu" in p:
            cpu[p["test"]] += p["cpu"] - last_cpu.get(p["worker"], p["cpu"])
            last_cpu[p["worker"]] = p["cpu"]
    print(f"span {stop - start:.0f} s, {len(tests)} tests, {len(workers)} workers")
    for w, spans in sorted(workers.items()):
        busy = sum(b - a for a, b in spans)
        print(f"  {w}: busy {busy:.0f} s, first {min(a for a, _ in spans) - start:.0f} s, "
              f"last {max(b for _, b in spans) - start:.0f} s")
    events = sorted([(a, 1) for s in workers.values() for a, _ in s] +
                    [(b, -1) for s in workers.values() for _, b in s])
    level, last, at = 0, start, collections.Counter()
    for t, d in events:
        at[level] += t - last
        level, last = level + d, t
    print("  seconds with k workers in a test: " +
          ", ".join(f"{k}: {v:.0f}" for k, v in sorted(at.items())))
    if cpu:
        print(f"CPU seconds: {sum(cpu.values()):.0f} in all; the {top} most:")
        for name, c in cpu.most_common(top):
            print(f"  {c:6.1f} s {name}")
        by_file = collections.Counter()
        for name, c in cpu.items():
            by_file[name.split("::")[0]] += c
        print("  by file: " + ", ".join(f"{f.split('/', 1)[1]} {c:.0f}" for f, c in by_file.most_common(12)))
    print(f"the {top} longest (total = setup + call + teardown):")
    for (w, name), t in sorted(tests.items(), key=lambda kv: -sum(kv[1].values()))[:top]:
        print(f"  {sum(t.values()):6.1f} s (setup {t['setup']:5.1f}) {w} {name}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25)
