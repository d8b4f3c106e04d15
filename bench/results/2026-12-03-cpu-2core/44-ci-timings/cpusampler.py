"""Sample /proc every 0.5 s; attribute each process's CPU ticks (delta) to a category by its cmdline."""
import os, sys, time, collections, json, signal
HZ = os.sysconf("SC_CLK_TCK")
def cat(cmd):
    c = " ".join(cmd)
    if "reframe_fast" in c or "reframe.frontend" in c or c.startswith("reframe") or "/reframe " in c: return "reframe-session"
    if "-m gpucomm" in c and "pytest" not in c: 
        for k in ("acceptance","nightly","report","tolerances"):
            if f"gpucomm {k}" in c or f"-m gpucomm {k}" in c: return "gpucomm-cli"
        return "payload"
    if "gpucomm" in c and ("bin/gpucomm " in c): return "gpucomm-cli"
    if "pytest" in c or "xdist" in c or "execnet" in c: return "pytest-worker"
    n = os.path.basename(cmd[0]) if cmd else "?"
    if n in ("prterun","prted","mpirun","prte"): return "prrte"
    if n.startswith("python"): return "python-other:" + " ".join(cmd[1:3])[:60]
    return n[:30]
last = {}; tot = collections.Counter(); total_ticks = [0]; by_case = collections.Counter()
import re
def case(pid, cmd):
    """payload rank: (stage test name or cwd tail, op, method)"""
    try: cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError: cwd = "?"
    m = re.search(r"/stage/[^/]+/[^/]+/[^/]+/([^/]+)", cwd)
    name = m.group(1) if m else "direct:" + "/".join(cwd.split("/")[-2:])
    c = " ".join(cmd); op = c.split("-m gpucomm", 1)[1].split()[:1] if "-m gpucomm" in c else ["?"]
    mm = re.search(r"--method (\S+)", c)
    return f"{name} | {op[0] if op else '?'} {mm.group(1) if mm else ''}"
stop = [False]
signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
def idle():
    with open("/proc/stat") as f: v = f.readline().split()[1:]
    v = list(map(int, v)); return v[3] + v[4], sum(v)
i0, t0 = idle()
while not stop[0]:
    seen = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit(): continue
        try:
            with open(f"/proc/{pid}/stat") as f: st = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f: cmd = f.read().split(b"\0")
        except OSError: continue
        rest = st[st.rfind(")") + 2:].split()
        ticks = int(rest[11]) + int(rest[12])
        start = rest[19]
        key = (pid, start)
        cmd = [c.decode(errors="replace") for c in cmd if c]
        seen[key] = ticks
        prev = last.get(key, 0)
        if ticks > prev:
            k = cat(cmd) if cmd else "kernel/" + st[st.find("(")+1:st.rfind(")")][:20]
            tot[k] += ticks - prev
            if k == "payload": by_case[case(pid, cmd)] += ticks - prev
    last = seen
    time.sleep(0.5)
i1, t1 = idle()
out = {"idle_fraction": (i1 - i0) / max(1, t1 - t0), "cpu_s": {k: v / HZ for k, v in tot.most_common()},
       "payload_by_case": {k: v / HZ for k, v in by_case.most_common()}}
json.dump(out, open(sys.argv[1], "w"), indent=1)
