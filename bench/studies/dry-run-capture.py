#!/usr/bin/env python3
"""The dry-run job scripts of every site and mode, captured into one folder, to show that a
change that should change no behaviour leaves them byte-identical (issue 42).

    python bench/studies/dry-run-capture.py /tmp/before            # at the old commit
    python bench/studies/dry-run-capture.py /tmp/after             # at the new one
    diff -r /tmp/before /tmp/after && echo identical

Every system of config/systems/ in the default mode and every mode of config/modes.py, with
and without GPUCOMM_PYTHON, the account the tests give (tests/rfm/test_sites.py), the default
mode also on 1, 2 and 512 nodes (-P num_nodes).  OUT/<system>/<mode>-<venv|novenv>/ holds
cases.txt (each test case: display name, result, fail reason) and one <case>.sh per job
script.  Normalised (what differs between two runs of the same commit): the run's --prefix
(-> <PREFIX>), the repository's path (-> <REPO>), and the modes' --timestamp folder
(<date>T<time><zone>-<pid> -> <TIMESTAMP>), and the local system's GPUCOMM_WATCH_PID (the
ReFrame process's pid and start time -> <PID>:<START>).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ACCOUNT = "gpucomm_test"
VENV_PYTHON = "/scratch/gpucomm-venv/bin/python"
#: ``python -c MAIN ARGS`` is ``reframe ARGS`` with this interpreter's ReFrame
MAIN = "import sys; from reframe.frontend.cli import main; sys.argv[0] = 'reframe'; sys.exit(main())"
TIMESTAMP = re.compile(r"\d{8}T\d{6}[+-]\d{4}-\d+")
#: the local system's watched ReFrame process (rfm.watch): its pid and start time, every run its own
WATCH_PID = re.compile(r"GPUCOMM_WATCH_PID=\d+:\d*")


def systems():
    return sorted(p.stem for p in (REPO / "config" / "systems").glob("*.py") if not p.stem.startswith("_"))


def modes():
    import runpy
    return ["default", "default-nodes"] + [m["name"] for m in runpy.run_path(str(REPO / "config" / "modes.py"))
                          ["site_configuration"]["modes"]]


def env(venv):
    out = {k: v for k, v in os.environ.items() if not k.startswith(("SBATCH_", "SLURM_", "RFM_", "GPUCOMM_"))}
    out.update(RFM_RESOLVE_MODULE_CONFLICTS="n", RFM_ENABLE_RESULTS_STORAGE="n", SBATCH_ACCOUNT=ACCOUNT)
    if venv:
        out["GPUCOMM_PYTHON"] = VENV_PYTHON
    return out


def normalise(text, prefix):
    text = TIMESTAMP.sub("<TIMESTAMP>", text.replace(str(prefix), "<PREFIX>").replace(str(REPO), "<REPO>"))
    return WATCH_PID.sub("GPUCOMM_WATCH_PID=<PID>:<START>", text)


def capture(out, system, mode, venv):
    dest = out / system / f"{mode}-{'venv' if venv else 'novenv'}"
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpucomm-dry-") as tmp:
        prefix = Path(tmp)
        args = [sys.executable, "-c", MAIN, "-C", str(REPO / "config" / "settings.py"),
                "--system", system, "-c", "checks/", "--dry-run", "--prefix", str(prefix),
                "--report-file", str(prefix / "report.json")]
        if mode == "default-nodes":
            args += ["-P", "num_nodes=1,2,512"]
        elif mode != "default":
            args += ["--mode", mode]
        proc = subprocess.run(args, cwd=REPO, env=env(venv), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=900)
        (dest / "rc.txt").write_text(f"{proc.returncode}\n")
        try:
            runs = json.loads((prefix / "report.json").read_text())["runs"]
        except (OSError, ValueError):
            (dest / "output.txt").write_text(normalise(proc.stdout, prefix))
            return f"{system} {mode} venv={venv}: no report (rc {proc.returncode})"
        lines = []
        for case in sorted(runs[0]["testcases"], key=lambda c: c["display_name"]):
            name = case["display_name"]
            lines.append(f"{name}\t{case['result']}\t{case.get('fail_reason') or ''}")
            script = Path(case.get("stagedir") or "/nonexistent") / "rfm_job.sh"
            if case.get("stagedir") and script.exists():
                fname = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{name}@{case['system']}:{case['partition']}"
                               f"+{case['environ']}")
                (dest / f"{fname}.sh").write_text(normalise(script.read_text(), prefix))
        (dest / "cases.txt").write_text(normalise("\n".join(lines) + "\n", prefix))
    return f"{system} {mode} venv={venv}: {len(lines)} cases"


def main():
    out = Path(sys.argv[1]).resolve()
    jobs = int(os.environ.get("JOBS", "2"))
    todo = [(s, m, v) for s in systems() for m in modes() for v in (True, False)]
    with ThreadPoolExecutor(jobs) as pool:
        for line in pool.map(lambda t: capture(out, *t), todo):
            print(line, flush=True)


if __name__ == "__main__":
    main()
