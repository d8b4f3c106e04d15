"""A new payload option is one row of contract.PAYLOAD_OPTIONS (docs/architecture.md, "Adding a
payload option"): in a scratch copy of the tree with one row added and nothing else edited, the
payload's command line takes it (its kind's range), the engine's RunConfig carries it, the
checks have its -S variable with the same range, and a dry-run job script passes it on."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpucomm.contract import NUMBER_KINDS, PAYLOAD_OPTIONS

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from reframe_helpers import clean_env, reframe_cmd, report_cases  # noqa: E402

#: the one line added to contract.PAYLOAD_OPTIONS
ROW = ('    PayloadOption("--spin", "spins per sample (the recipe test\'s option)", kind="count", metavar="N",\n'
       '                  variable="spin", var_type="integer", unset=0),\n')

PROBE = """
import json
from gpucomm.contract import PAYLOAD_OPTIONS
from gpucomm.payload.cli import build_parser, run_config
from gpucomm.rfm.base import GpucommCheck
args = build_parser().parse_args(["pingpong", "--method", "host", "--sizes", "8", "--spin", "3"])
cfg = run_config(args, sizes=[8], validate_sizes=None, loop="auto", timeout=None)
row = next(o for o in PAYLOAD_OPTIONS if o.flag == "--spin")
print(json.dumps({"op_args": cfg.op_args.get("spin"), "variable": "spin" in GpucommCheck._rfm_var_space,
                  "low": row.problem(-2), "zero": row.problem(0), "line": row.command_line(4, "pingpong")}))
"""


def test_every_row_reaches_the_run_config_or_op_args():
    """run_config: a row that is a RunConfig field is that field, any other is in op_args."""
    from gpucomm.payload.cli import build_parser, run_config
    args = build_parser().parse_args(["pingpong", "--method", "host", "--iters", "7", "--graph", "off"])
    cfg = run_config(args, sizes=[8], validate_sizes=None, loop="auto", timeout=None)
    assert (cfg.iters, cfg.graph, cfg.sizes, cfg.op) == (7, "off", [8], "pingpong")
    assert cfg.op_args is not None and "debug" in cfg.op_args and "iters" not in cfg.op_args


def test_a_rows_range_is_the_payloads_and_the_checks():
    """The check's -S range comes from the row's kind, as the payload's argparse type does."""
    rows = {o.name: o for o in PAYLOAD_OPTIONS}
    assert rows["iters"].problem(-5) == "must be >= 0" and rows["iters"].problem(0) is None
    assert rows["budget"].problem(float("inf")) == "must be a finite number"
    assert rows["precision_target"].problem(-0.5) == "must be -1 (the payload's default) or >= 0"
    assert rows["precision_target"].problem(2.0) == "must be <= 1"
    assert rows["graph"].problem("maybe") == "choose auto, on or off"
    assert {o.kind for o in PAYLOAD_OPTIONS if o.kind} <= set(NUMBER_KINDS) | {"methods"}


@pytest.mark.reframe
def test_a_new_option_is_one_row(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "gpucomm", src / "gpucomm", ignore=shutil.ignore_patterns("__pycache__"))
    contract = src / "gpucomm" / "contract.py"
    text = contract.read_text()
    end = text.index("\n)\n", text.index("PAYLOAD_OPTIONS = (")) + 1
    contract.write_text(text[:end] + ROW + text[end:])
    env = clean_env(PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got == {"op_args": 3, "variable": True, "low": "must be >= 0", "zero": None,
                   "line": ["--spin", "4"]}
    bad = subprocess.run([sys.executable, "-m", "gpucomm", "pingpong", "--method", "host", "--spin", "0"],
                         env=env, capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "'0' must be >= 1" in bad.stderr
    # the checks: a dry run on Alps writes a job script that passes -S spin=4 on
    prefix = tmp_path / "rfm"
    run = subprocess.run(reframe_cmd("--system", "alps", "-c", "checks/pingpong.py", "-n", "%method=host",
                                     "-S", "spin=4", "--dry-run", "--prefix", prefix,
                                     "--report-file", prefix / "report.json"),
                         cwd=REPO, env={**env, "SBATCH_ACCOUNT": "x", "GPUCOMM_PYTHON": "/venv/bin/python"},
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    cases = report_cases(prefix / "report.json")
    script = (Path(cases[0]["stagedir"]) / "rfm_job.sh").read_text()
    assert " --spin 4 " in script
