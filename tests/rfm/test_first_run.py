"""A site's first run (issue #32): what a site engineer meets before anything is measured.

Each test names the behaviour it replaces.  Dry runs of every site in every mode are in
test_site_modes.py; the job scripts line by line in test_sites.py.
"""

import os
import re
import runpy
import shlex
import subprocess
import sys

import pytest

from gpucomm.constants import ACCOUNT_UNSET, PYTHON_PLACEHOLDER
from reframe_helpers import (
    NATIVE_CHECKS,
    NODESTATE_CHECKS,
    REPO,
    clean_env,
    dry_runs,
    job_script,
    reframe,
    report_cases,
    shared_dry_run,
)
from test_sites import ACCOUNT, SITES, VENV_PYTHON, mode_cases, site_env

SYSTEMS = tuple(SITES)


def _run(tmp_path, system, *args, env):
    report = tmp_path / "report.json"
    out = reframe("--system", system, "-c", "checks/", *args, "--prefix", tmp_path,
                  "--report-file", report, env=env)
    return out, (report_cases(report) if report.exists() else [])


def warnings(text, about):
    return [ln for ln in text.splitlines() if "WARNING" in ln and about in ln]


# -- no interpreter (GPUCOMM_PYTHON) -----------------------------------------------------------

@pytest.mark.parametrize("system", SYSTEMS)
def test_dry_run_without_interpreter_writes_every_script(tmp_path, system):
    """Old: every check failed at setup ("set GPUCOMM_PYTHON"), no payload script written.
    Now every script is written, with the placeholder as the interpreter, and one warning."""
    out, cases = _run(tmp_path, system, "-n", "^(PingPongCheck|AllReduceCheck)", "--dry-run",
                      env=clean_env(SBATCH_ACCOUNT=ACCOUNT))
    assert out.returncode == 0, out.stdout[-3000:]
    placeholder = PYTHON_PLACEHOLDER.format(recipe=SITES[system].recipe)
    ran = [c for c in cases if c["result"] == "pass"]
    assert ran and all(c["result"] in ("pass", "skip") for c in cases)
    for case in ran:
        lines = job_script(case).splitlines()
        launch = [ln for ln in lines if ln.startswith("srun ")]
        assert launch and all(f" {placeholder} -m gpucomm " in ln for ln in launch), lines
        assert any(ln.startswith(f"{placeholder} -m gpucomm preflight ") for ln in lines)
    (line,) = warnings(out.stdout, "GPUCOMM_PYTHON")
    assert f"set GPUCOMM_PYTHON to the venv built per {SITES[system].recipe}" in line


def test_placeholder_is_the_shell_asking_for_the_interpreter(tmp_path):
    """The placeholder is shell: unset, the job ends naming the recipe; set, it runs."""
    placeholder = PYTHON_PLACEHOLDER.format(recipe="docs/sites/lumi.md")
    script = f"{placeholder} -c 'print(42)'"
    bare = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"]})
    assert bare.returncode != 0 and "built per docs/sites/lumi.md" in bare.stderr
    given = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                           env={"PATH": os.environ["PATH"], "GPUCOMM_PYTHON": sys.executable})
    assert given.returncode == 0 and given.stdout == "42\n"


def test_run_without_interpreter_fails_with_its_reason(tmp_path):
    """A real run without GPUCOMM_PYTHON still fails, at setup (nothing is submitted)."""
    out, cases = _run(tmp_path, "alps", "-n", "^PingPongCheck%method=ccl", "-r",
                      env=clean_env(SBATCH_ACCOUNT=ACCOUNT))
    assert out.returncode != 0
    (case,) = cases
    assert case["result"] == "fail" and case["fail_phase"] == "setup"
    assert "set GPUCOMM_PYTHON to the venv built per docs/sites/alps.md" in case["fail_reason"]


# -- no Slurm account ------------------------------------------------------------------------

@pytest.mark.parametrize("system", SYSTEMS)
def test_dry_run_without_account_shows_the_line_to_fill_in(tmp_path, system):
    """Old: no --account line and no word about it (LUMI's guide: "mandatory"; the paper's
    Leonardo and LUMI scripts all set one; CSCS's own config always passes one)."""
    out, cases = _run(tmp_path, system, "-n", "^PingPongCheck", "--dry-run",
                      env=clean_env(GPUCOMM_PYTHON=VENV_PYTHON))
    assert out.returncode == 0, out.stdout[-3000:]
    ran = [c for c in cases if c["result"] == "pass"]
    assert ran
    for case in ran:
        assert f"#SBATCH --account={ACCOUNT_UNSET}" in job_script(case).splitlines()
    (line,) = warnings(out.stdout, "SBATCH_ACCOUNT")
    assert f"no Slurm account for {system}, which requires one: set SBATCH_ACCOUNT=" in line


def test_run_without_account_fails_with_its_reason(tmp_path):
    out, cases = _run(tmp_path, "lumi", "-n", "^PingPongCheck%method=host", "-r",
                      env=clean_env(GPUCOMM_PYTHON=VENV_PYTHON, RFM_RESOLVE_MODULE_CONFLICTS="n"))
    assert out.returncode != 0
    (case,) = cases
    assert case["result"] == "fail" and case["fail_phase"] == "setup"
    assert "no Slurm account for lumi, which requires one: set SBATCH_ACCOUNT" in case["fail_reason"]


# -- the perflog of a dry run ----------------------------------------------------------------

def test_dry_run_writes_no_perflog(tmp_path):
    """Old: a dry run wrote one perflog line per perf variable, result "pass", value null."""
    out, cases = _run(tmp_path, "alps", "-n", "^PingPongCheck%method=ccl", "--dry-run",
                      env=site_env())
    assert out.returncode == 0 and cases
    assert not list(tmp_path.glob("perflogs/**/*.log"))


@pytest.mark.parametrize("argv, handlers", [(["reframe", "-c", "checks/", "--dry-run"], 0),
                                            (["reframe", "-c", "checks/", "--dry"], 0),
                                            (["reframe", "-c", "checks/", "-r"], 2)])
def test_dashboard_gets_no_dry_run(monkeypatch, argv, handlers):
    """Nor would a dry run post its null values to GPUCOMM_PERFLOG_URL."""
    monkeypatch.setenv("GPUCOMM_PERFLOG_URL", "http://dashboard.invalid/gpucomm/_doc")
    monkeypatch.setattr(sys, "argv", argv)
    conf = runpy.run_path(str(REPO / "config" / "results.py"))["site_configuration"]
    assert len(conf["logging"][0]["handlers_perflog"]) == handlers


# -- the README's example ----------------------------------------------------------------------

def readme_site_example():
    """The shell lines of the README's "A site's first run" block."""
    text = (REPO / "README.md").read_text()
    block = text.split("**A site's first run", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [ln for ln in block.splitlines() if ln.strip()]


def test_readme_site_example_runs_as_written(tmp_path):
    """Old: without -C/RFM_CONFIG_FILES it found no 'alps'; with it but no GPUCOMM_PYTHON every
    payload check failed; ``SBATCH_ACCOUNT=<project>`` is a shell redirection.  The block runs as
    written from the repository root, its last line (``-r``) as a dry run here."""
    lines = readme_site_example()
    assert lines[-1].split("#")[0].rstrip().endswith(" -r"), lines[-1]
    lines[-1] = lines[-1].split("#")[0].rstrip()[:-len(" -r")] + " --dry-run"
    env = clean_env(HOME=tmp_path, RFM_PREFIX=tmp_path / "prefix",
                    PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    del env["RFM_RESOLVE_MODULE_CONFLICTS"]  # the configuration itself turns it off
    run = subprocess.run(["bash", "-e", "-c", "\n".join(lines)], cwd=REPO, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1200)
    assert run.returncode == 0, run.stdout[-4000:]
    reports = tmp_path / ".reframe" / "reports"
    (first,), (health,) = (list(reports.glob(pattern)) for pattern in ("run-report-*.json",
                                                                        "gpucomm-run-*.json"))
    first, health = report_cases(first), report_cases(health)
    placeholder = PYTHON_PLACEHOLDER.format(recipe="docs/sites/alps.md")
    for cases, python in ((first, placeholder), (health, "/gpucomm-venv/bin/python")):
        ran = [c for c in cases if c["result"] == "pass"]
        assert ran and all(c["result"] in ("pass", "skip") for c in cases), \
            [(c["display_name"], c["fail_reason"]) for c in cases if c["result"] == "fail"]
        for case in ran:
            script = job_script(case)
            assert "#SBATCH --account=g123" in script, case["display_name"]
            if case["name"].split()[0] in NATIVE_CHECKS:  # the site's tool, found in the uenv's view
                assert ' "$GPUCOMM_TOOL" ' in script, case["display_name"]
                continue
            module = "gpucomm.site.nodestate" if case["name"].split()[0] in NODESTATE_CHECKS else "gpucomm"
            assert f"{python} -m {module} " in script, case["display_name"]
    assert {c["display_name"].split()[0] for c in health} == {"HealthCheck", "PairMatrixCheck",
                                                               "DataPathsCheck", *NODESTATE_CHECKS}
    assert not warnings(run.stdout, "SBATCH_ACCOUNT")
    assert len(warnings(run.stdout, "GPUCOMM_PYTHON")) == 1  # the first dry run's, once


# -- LUMI: the GTL under cray-python's mpi4py -------------------------------------------------

def _bash_lines(page):
    """The uncommented shell lines of a page's ```bash blocks."""
    text = (REPO / "docs" / "sites" / page).read_text()
    lines = []
    for block in text.split("```bash\n")[1:]:
        lines += [ln.split("#")[0].strip() for ln in block.split("```", 1)[0].splitlines()]
    return [ln for ln in lines if ln]


def test_lumi_recipe_does_not_keep_cray_pythons_mpi4py_by_accident():
    """Old recipe: a --system-site-packages venv on cray-python (which ships mpi4py built against
    Cray MPICH, without the GTL: lumi-ug python.md), then ``pip install --no-binary=mpi4py
    mpi4py``, which finds it installed and does nothing."""
    lines = _bash_lines("lumi.md")
    assert any("venv --system-site-packages" in ln for ln in lines)
    installs = [ln for ln in lines if re.search(r"\bpip install\b.*\bmpi4py\b", ln)]
    assert installs and all("--ignore-installed" in ln for ln in installs), installs


def test_lumi_gpu_aware_mpi_preloads_the_gtl(tmp_path):
    """Old: MPICH_GPU_SUPPORT_ENABLED=1 alone, so with cray-python's mpi4py every gpu-aware-mpi
    job failed its preflight (LUMI's own check preloads libmpi_gtl_hsa: lumi-reframe-tests
    checks/apps/python/check_mpi4py.py)."""
    out, cases = _run(tmp_path, "lumi", "-n", "^(PingPongCheck|AllReduceCheck)%method=(gpu-aware-mpi|host)",
                      "--dry-run", env=site_env())
    assert out.returncode == 0, out.stdout[-3000:]
    preload = "export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so"
    for case in cases:
        lines = job_script(case).splitlines()
        preflight = next(i for i, ln in enumerate(lines) if " -m gpucomm preflight " in ln)
        if case["method"] == "gpu-aware-mpi":
            assert preload in lines[:preflight] and "export MPICH_GPU_SUPPORT_ENABLED=1" in lines
        else:
            assert preload not in lines, case["display_name"]


# -- the network plugin, proven before the launch ---------------------------------------------

def test_preflight_proves_the_network_plugin_loads(monkeypatch, tmp_path):
    """Old: the preflight named the plugin module but did not try it, so a missing plugin was
    NCCL's init error (NCCL_NET set) or a silent socket fallback, after the launch.  Now
    NCCL/RCCL's plugin library is dlopened by name, and its absence is the job's one reason."""
    from gpucomm.site import preflight
    monkeypatch.setattr(preflight, "check_gpu", lambda info: None)
    monkeypatch.setattr(preflight, "check_ccl", lambda info, plugin="": None)
    info, reason = preflight.preflight(["ccl"], "aws-ofi-nccl/1.18.0-rocm",
                                       net_plugin="librccl-net-gpucomm-absent.so")
    assert reason.startswith("the NCCL/RCCL network plugin librccl-net-gpucomm-absent.so does not "
                             "load (librccl-net-gpucomm-absent.so: cannot open shared object file")
    assert reason.endswith(": load the plugin module aws-ofi-nccl/1.18.0-rocm")
    info, reason = preflight.preflight(["ccl"], net_plugin="libc.so.6")  # a library that loads
    assert reason is None and any(p.endswith("libc.so.6") for p in info["net_plugin"])
    info, reason = preflight.preflight(["host"], net_plugin="librccl-net-gpucomm-absent.so")
    assert reason is None  # only a ccl launch needs it


def test_missing_plugin_is_the_jobs_reason(tmp_path):
    """The sanity's first step is the preflight's: the plugin line, not "no GPUCOMM-DONE line"."""
    import reframe.utility.sanity as sn
    from reframe.core.exceptions import SanityError

    from gpucomm.rfm.sanity import preflight_ok
    out, err = tmp_path / "out", tmp_path / "err"
    out.write_text('GPUCOMM-PREFLIGHT {"ok": false, "methods": ["ccl"], "python": "/v/bin/python", '
                   '"error": "the NCCL/RCCL network plugin libnccl-net.so does not load '
                   '(libnccl-net.so: cannot open shared object file: No such file or directory): '
                   'load the plugin module aws-ofi-nccl"}\n')
    err.write_text("")
    with pytest.raises(SanityError, match=r"preflight failed for ccl: the NCCL/RCCL network plugin "
                                          r"libnccl-net.so does not load"):
        sn.evaluate(preflight_ok(str(out), str(err), "docs/sites/alps.md"))


@pytest.mark.parametrize("system, library", [("alps", "libnccl-net.so"), ("lumi", "librccl-net.so"),
                                             ("leonardo", None)])
def test_ccl_preflight_names_the_plugin_library(tmp_path, system, library):
    """Alps: NCCL's own name for the plugin (NCCL_NET_PLUGIN unset); LUMI: RCCL's; Leonardo:
    NCCL's internal IB transport, no plugin."""
    out, cases = _run(tmp_path, system, "-n", "^PingPongCheck%method=(ccl|host)", "--dry-run",
                      env=site_env())
    assert out.returncode == 0, out.stdout[-3000:]
    for case in cases:
        (line,) = [ln for ln in job_script(case).splitlines() if " -m gpucomm preflight " in ln]
        if library and case["method"] == "ccl":
            assert line.endswith(f" --net-plugin {library} || exit $?"), line
        else:
            assert "--net-plugin" not in line, line


# -- Leonardo: the service level of the runs the references are -------------------------------

def test_leonardo_paper_service_level_follows_the_references(tmp_path):
    """Old: the paper mode exported SL 1 for every scaling job, but Figs. 9/10's references at
    4-256 nodes are the SL0_hcoll0 runs (paper_reference.md: SL 1 only at 2 nodes), and the
    collectives' multi-node runs (the same figures) got conf/leonardo.sh's default, 1."""
    out, cases = _run(tmp_path, "leonardo", "--mode", "paper", "-n",
                      "^(AllToAllScalingCheck|AllReduceScalingCheck|AllReduceCheck|"
                      "MultiPingPongCheck)%method=ccl", "-P", "num_nodes=2,4", "--dry-run",
                      env=site_env())
    assert out.returncode == 0, out.stdout[-3000:]
    seen = set()
    for case in cases:
        if case["result"] != "pass":
            continue
        check, nodes = case["name"].split()[0], case["num_nodes"]
        want = "0" if check == "MultiPingPongCheck" or nodes > 2 else "1"
        lines = job_script(case).splitlines()
        assert f"export NCCL_IB_SL={want}" in lines and f"export UCX_IB_SL={want}" in lines, \
            case["display_name"]
        seen.add((check, nodes > 2))
    assert {("AllToAllScalingCheck", True), ("AllToAllScalingCheck", False),
            ("AllReduceCheck", True), ("AllReduceCheck", False), ("MultiPingPongCheck", False)} <= seen


# -- the paper's tuning, complete ---------------------------------------------------------------

@pytest.mark.parametrize("system", ["alps", "lumi"])
def test_paper_tuning_is_complete_and_only_in_paper_mode(tmp_path_factory, system):
    """Old: LUMI's paper mode lacked NCCL_BUFFSIZE=33554432, FI_CXI_ATS=0 and
    FI_CXI_DEFAULT_CQ_SIZE=131072 (every RCCL environment of Blink-GPU Makefile.LUMI) and set
    its tuning on one node only; Alps' lacked MPICH_SMP_SINGLE_COPY_MODE=CMA and
    MPICH_MALLOC_FALLBACK=1 (blink conf/alps.sh); Alps' ccl lacked the FI_CXI_RDZV_*=0 hang
    workaround and NCCL_NCHANNELS_PER_NET_PEER=4 that CSCS's own NCCL check sets."""
    from test_sites import PAPER_ENV
    # acceptance runs its one-node checks per node and its multi-node ones in acceptance-network
    nodes_seen = {}
    for mode in ("paper", "acceptance", "acceptance-network"):
        ran = [c for c in mode_cases(tmp_path_factory, system, mode) if c["result"] == "pass"
               and c["name"].split()[0] in ("PingPongCheck", "AllToAllScalingCheck")
               and c["method"] in ("ccl", "host", "gpu-aware-mpi")]
        nodes_seen.setdefault(mode.split("-")[0], set()).update(c["num_nodes"] > 1 for c in ran)
        for case in ran:
            lines = job_script(case).splitlines()
            for var, value in PAPER_ENV[system].get(case["method"], {}).items():
                assert (f"export {var}={value}" in lines) == (mode == "paper"), \
                    f"{mode} {case['display_name']}: {var}"
            if system == "alps" and case["method"] == "ccl":
                for var, value in (("FI_CXI_RDZV_GET_MIN", 0), ("FI_CXI_RDZV_THRESHOLD", 0),
                                   ("FI_CXI_RDZV_EAGER_SIZE", 0), ("NCCL_NCHANNELS_PER_NET_PEER", 4)):
                    assert f"export {var}={value}" in lines, case["display_name"]
    assert nodes_seen == {"paper": {False, True}, "acceptance": {False, True}}


# -- the paper's references judge in the paper mode only -----------------------------------

@pytest.mark.parametrize("system", SYSTEMS)
def test_paper_references_judge_only_in_paper_mode(tmp_path_factory, system):
    """Old: the paper's values, measured with its tuned stacks (LUMI: NCCL_NCHANNELS_PER_PEER=32,
    its own RCCL 5.7.1.1), judged every mode, so a healthy machine would fail its default and
    acceptance runs.  Now they judge in the paper mode; elsewhere ReFrame shows them without
    bounds and the check says so (descr and the perflog's reference_note)."""
    import yaml
    refs = yaml.safe_load((REPO / "config" / "references" / f"{system}.yaml").read_text())
    assert "PingPongCheck" in refs["$paper"]
    partition = SITES[system].partition
    for mode in ("acceptance", "paper"):
        (case,) = [c for c in mode_cases(tmp_path_factory, system, mode)
                   if c["name"].split()[0] == "PingPongCheck" and c["method"] == "ccl"]
        want = refs["PingPongCheck"][partition][1]["ccl"]
        for var, (value, lower, upper, unit) in want.items():
            got = case["perfvalues"][f"{partition}:{var}"][1:5]
            bounds = [lower, upper] if mode == "paper" else [None, None]
            assert got == [value, *bounds, unit], f"{mode} {var}"
        note = "the paper's figures, as information: they judge only in the paper mode"
        assert (note in case["descr"]) == (mode != "paper"), case["descr"]


# -- no public figure: "no reference yet", as information --------------------------------------

def _no_figure(case):
    """The perf values of a case carry no figure: ReFrame's 0 without bounds, and the note."""
    return (case["reference_note"].startswith("no reference") and
            all(v[1:4] == [0, None, None] for v in case["perfvalues"].values()))


@pytest.mark.parametrize("system", SYSTEMS)
def test_checks_without_a_public_figure_say_no_reference_yet(tmp_path_factory, system):
    """The checks no public figure exists for (HealthCheck, PairMatrixCheck, BwCheck, NoiseCheck;
    staging and, on LUMI, ccl's 4-rank multi ping-pong; Alps' and LUMI's ccl all-to-all at 128
    nodes and more) say "no reference ... yet" in their description and in the perflog's
    reference_note, never a pass of a figure; the others carry the paper's."""
    def acceptance_only(case):  # the checks with and without a figure, nothing else
        check, method = case["name"].split()[0], case.get("method")
        return (check == "BwCheck" or check == "MultiPingPongCheck" and method in ("staging", "ccl")
                or check == "AllToAllScalingCheck" and method == "ccl")

    # the session's shared dry runs of these modes; acceptance-network's own, to 512 nodes
    runs = {mode: [c for c in mode_cases(tmp_path_factory, system, mode)
                   if not mode.startswith("acceptance") or acceptance_only(c)]
            for mode in ("acceptance", "health", "noise")}
    runs["acceptance-network"] = [c for c in shared_dry_run(
        tmp_path_factory, "--system", system, "-c", "checks/", "--mode", "acceptance-network",
        "-S", "max_nodes=512", SBATCH_ACCOUNT=ACCOUNT, GPUCOMM_PYTHON=VENV_PYTHON) if acceptance_only(c)]
    seen = set()
    for cases in runs.values():
        for case in cases:
            if case["result"] != "pass":
                continue
            check = case["name"].split()[0]
            if check in NODESTATE_CHECKS:  # the hardware, no perf variable to reference
                continue
            big = check == "AllToAllScalingCheck" and case["num_nodes"] >= 128 and system != "leonardo"
            paper = (check == "MultiPingPongCheck" and case["method"] == "ccl" and case["pairs"] == "all"
                     and system != "lumi") or (check == "AllToAllScalingCheck" and not big)
            if paper:
                assert case["reference_note"].startswith("the paper's figures, as information"), \
                    case["display_name"]
            else:
                assert _no_figure(case), (case["display_name"], case["reference_note"])
                assert f"[{case['reference_note']}: bring-up in docs/sites/{system}.md]" in case["descr"]
            seen.add(check)
    assert {"BwCheck", "MultiPingPongCheck", "AllToAllScalingCheck", "HealthCheck",
            "PairMatrixCheck", "NoiseCheck"} <= seen


# -- placement: proven from what Slurm documents -------------------------------------------

#: `scontrol show topology NODES` of Slurm's topology/tree plugin (its print format:
#: "SwitchName=%s Level=%u LinkSpeed=%u" + " Nodes=%s" + " Switches=%s"), for two nodes
SAME_LEAF = ("SwitchName=s12 Level=0 LinkSpeed=1 Nodes=nid[001056-001060]\n"
             "SwitchName=g3 Level=1 LinkSpeed=1 Nodes=nid[001000-001200] Switches=s[10-15]\n")
ABOVE_LEAF = "SwitchName=g3 Level=1 LinkSpeed=1 Nodes=nid[001000-001200] Switches=s[10-15]\n"
TOP = "SwitchName=top Level=2 LinkSpeed=1 Nodes=nid[000001-009999] Switches=g[1-24]\n"


def test_placement_from_scontrol_show_topology():
    from gpucomm.site.placement import placement_of_switches
    assert placement_of_switches(SAME_LEAF) == (
        "same-switch", "scontrol show topology: switch s12 (level 0) connects the nodes")
    assert placement_of_switches(ABOVE_LEAF)[0] == "different-switch"
    assert placement_of_switches(TOP)[0] == "different-group"
    assert placement_of_switches("No topology information available\n") == (
        "unknown", "scontrol show topology: No topology information available")
    assert placement_of_switches("") == ("unknown", "scontrol show topology: no output")


def _unknown_record(tmp_path):
    import json
    path = tmp_path / "gpucomm_results.json"
    path.write_text(json.dumps({"meta": {"placement": {
        "hosts": ["nid001056", "nid001058"], "topology_addr": [None, None],
        "xname": ["x1100c0s6b0n0", "x1100c0s6b1n0"], "distance": "unknown",
        "source": "no SLURM_TOPOLOGY_ADDR (Slurm without topology/tree, or not srun)"}}}))
    return str(path)


def test_placement_proven_without_slurm_topology_addr(tmp_path):
    """Old: without SLURM_TOPOLOGY_ADDR in the tasks (no Alps document mentions it) every
    MultiPingPongCheck ran and then skipped, so the first run had no Fig. 7 numbers.  Now the
    job's `scontrol show topology` record decides, and the reason names both sources."""
    import reframe.utility.sanity as sn
    from reframe.core.exceptions import SanityError, SkipTestError

    from gpucomm.rfm.sanity import placement_ok
    from gpucomm.site.placement import placement_of_switches
    record = _unknown_record(tmp_path)
    assert sn.evaluate(placement_ok(record, "same-switch", proof=placement_of_switches(SAME_LEAF)))
    with pytest.raises(SanityError, match=r"asked for, but the nodes are different-group: .*"
                                          r"\(scontrol show topology: switch top \(level 2\)"):
        sn.evaluate(placement_ok(record, "same-switch", proof=placement_of_switches(TOP)))
    with pytest.raises(SkipTestError, match=r"cannot confirm it \(no SLURM_TOPOLOGY_ADDR .*; "
                                            r"scontrol show topology: No topology information"):
        sn.evaluate(placement_ok(record, "same-switch",
                                 proof=placement_of_switches("No topology information available")))


@pytest.mark.parametrize("system", SYSTEMS)
def test_placed_jobs_record_slurms_topology(tmp_path, system):
    """Every multi-node job with a placement to prove records `scontrol show topology` of its
    nodes (after its preflight, before the launch) and keeps the file; others do not."""
    out, cases = _run(tmp_path, system, "-n", "^(MultiPingPongCheck%method=host|"
                      "AllReduceScalingCheck%method=ccl%nodes=2$)", "--dry-run", env=site_env())
    assert out.returncode == 0, out.stdout[-3000:]
    line = 'scontrol show topology "$SLURM_JOB_NODELIST" > gpucomm_topology.txt 2>&1 || true'
    seen = set()
    for case in cases:
        lines = job_script(case).splitlines()
        placed = case["name"].startswith("MultiPingPongCheck")
        assert (line in lines) == placed, case["display_name"]
        if placed:
            launch = next(i for i, ln in enumerate(lines) if ln.startswith("srun "))
            assert lines[launch - 1] == line and " -m gpucomm preflight " in lines[launch - 2]
            assert "gpucomm_topology.txt" in case["keep_files"]
        seen.add(placed)
    assert seen == {True, False}


# -- drift and citations -------------------------------------------------------------------

def _site_file(system, environ=None, monkeypatch=None):
    """config/systems/<system>.py's site_configuration, loaded under ``environ`` (extra vars)."""
    for name, value in (environ or {}).items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(REPO / "config" / "systems" / f"{system}.py"))["site_configuration"]


def test_site_software_is_current_and_versioned(monkeypatch):
    """Old: Alps' default uenv prgenv-gnu/25.11 while cscs-docs lists 26.3; Leonardo's
    'nccl' module unversioned (whatever the site's default is that day)."""
    for var in ("GPUCOMM_ALPS_UENV", "GPUCOMM_LEONARDO_MODULES"):
        monkeypatch.delenv(var, raising=False)
    (alps,) = _site_file("alps")["environments"]
    assert alps["extras"]["job_options"][0] == "--uenv=prgenv-gnu/26.3:v1"
    (leonardo,) = _site_file("leonardo")["environments"]
    assert all("/" in module for module in leonardo["modules"]), leonardo["modules"]
    page = (REPO / "docs" / "sites" / "alps.md").read_text()
    assert "prgenv-gnu/26.3:v1" in page and "cupy-cuda13x" in page


@pytest.mark.parametrize("system, environ, max_nodes, max_jobs", [
    ("alps", {}, None, 100), ("alps", {"SBATCH_PARTITION": "debug"}, 2, 100),
    ("leonardo", {}, 256, 100), ("leonardo", {"SBATCH_QOS": "boost_qos_dbg"}, 2, 2),
    ("leonardo", {"SBATCH_QOS": "normal"}, 64, 100),
    ("lumi", {}, 1024, 100), ("lumi", {"SBATCH_PARTITION": "dev-g"}, 32, 2)])
def test_small_partitions_and_qos_limits_are_modelled(monkeypatch, system, environ, max_nodes, max_jobs):
    """Old: Alps' debug partition and Leonardo's boost_qos_dbg kept the large limits (a 4-node
    job the scheduler refuses), LUMI's dev-g 100 jobs at once where a user may submit 2."""
    for var in ("SBATCH_PARTITION", "SBATCH_QOS"):
        monkeypatch.delenv(var, raising=False)
    (part,) = _site_file(system, environ, monkeypatch)["systems"][0]["partitions"]
    assert part["extras"].get("max_nodes") == max_nodes and part["max_jobs"] == max_jobs


def test_debug_partition_skips_what_it_would_refuse(tmp_path):
    out, cases = _run(tmp_path, "alps", "-n", "^AllReduceScalingCheck%method=ccl%nodes=(2|4)$",
                      "--dry-run", env=site_env(SBATCH_PARTITION="debug"))
    assert out.returncode == 0, out.stdout[-3000:]
    got = {c["num_nodes"]: c for c in cases}
    assert got[2]["result"] == "pass" and "#SBATCH --partition=debug" in job_script(got[2])
    assert got[4]["result"] == "skip"
    assert "alps:gh200 takes at most 2 nodes per job (extras['max_nodes']), not 4" in out.stdout


def test_site_facts_cite_the_file_that_has_them():
    """Old: Leonardo's NCCL_IGNORE_CPU_AFFINITY cited blink conf/leonardo.sh (it is only in
    conf/alps.sh; none of the paper's Leonardo files sets it: now not set); the Alps GPU request
    cited cscs-reframe-tests' daint.py (its '_rfm_gpu' resource is in config/cscs-ci.py,
    '--gpus-per-node=4' in config/systems/starlex.py)."""
    leonardo = (REPO / "config" / "systems" / "leonardo.py").read_text()
    assert "blink:conf/leonardo.sh: NCCL_IGNORE_CPU_AFFINITY" not in leonardo
    (env,) = runpy.run_path(str(REPO / "config" / "systems" / "leonardo.py"))["site_configuration"]["environments"]
    assert "NCCL_IGNORE_CPU_AFFINITY" not in env["extras"]["method_env_vars"]["ccl"]
    alps = (REPO / "config" / "systems" / "alps.py").read_text()
    assert "cscs-rfm:config/systems/daint.py ('--gpus-per-node' through '_rfm_gpu')" not in alps
    assert "cscs-rfm:config/cscs-ci.py" in alps and "cscs-rfm:config/systems/starlex.py" in alps


def test_a_sites_own_references_judge_in_every_mode(tmp_path):
    """The bring-up's entries (a check not under $paper) judge every mode; the paper's only the
    paper mode, in the same file."""
    import yaml
    refs = yaml.safe_load((REPO / "config" / "references" / "alps.yaml").read_text())
    refs["BwCheck"] = {"$index": ["$partition", "method"],
                       "alps:gh200": {"ccl": {"goodput_64MiB": [20.0, -0.1, None, "GB/s"]}}}
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "alps.yaml").write_text(yaml.safe_dump(refs, sort_keys=False))
    out, cases = _run(tmp_path, "alps", "--mode", "acceptance", "-n", "^(BwCheck|PingPongCheck)%method=ccl",
                      "--dry-run", env=site_env(GPUCOMM_REFERENCE_DIR=tmp_path / "refs"))
    assert out.returncode == 0, out.stdout[-3000:]
    got = {c["name"].split()[0]: c for c in cases}
    assert got["BwCheck"]["perfvalues"]["alps:gh200:goodput_64MiB"][1:5] == [20.0, -0.1, None, "GB/s"]
    assert got["BwCheck"]["reference_note"] == ""
    assert got["PingPongCheck"]["perfvalues"]["alps:gh200:latency_8B"][2:4] == [None, None]


def test_placement_source_names_the_record_that_proved_it(tmp_path):
    """The check's placement_source: scontrol's switch where it decided, '' where nothing did."""
    import reframe.utility.sanity as sn
    from reframe.core.exceptions import SkipTestError

    from gpucomm.rfm.mixins import TOPOLOGY_FILE, MultiNode
    record = _unknown_record(tmp_path)

    class Job:  # the attributes placement_proof reads
        stagedir, placement, placement_source = str(tmp_path), "same-switch", ""
        current_partition = type("P", (), {"extras": {}})()
    job = Job()
    (tmp_path / TOPOLOGY_FILE).write_text(SAME_LEAF)
    assert sn.evaluate(MultiNode.placement_proof(job, record))
    assert job.placement_source == "scontrol show topology: switch s12 (level 0) connects the nodes"
    (tmp_path / TOPOLOGY_FILE).write_text("No topology information available\n")
    with pytest.raises(SkipTestError):
        sn.evaluate(MultiNode.placement_proof(job, record))
    assert job.placement_source == ""


# -- the node-state reader finds its library (#45 item 1) --------------------------------------

#: site -> (its recipe, the vendor package the NodeStateCheck reader imports, how the recipe
#: installs it into the payload venv)
NODESTATE_LIBRARY = {"alps": ("alps.md", "pip install nvidia-ml-py"),
                     "leonardo": ("leonardo.md", "pip install nvidia-ml-py"),
                     "lumi": ("lumi.md", "pip install --no-cache-dir $AMDSMI_SRC")}


@pytest.mark.parametrize("system", SYSTEMS)
def test_nodestate_job_finds_its_library(tmp_path_factory, system):
    """Old: the recipes installed gpucomm with --no-deps and neither nvidia-ml-py nor amdsmi, so
    NodeStateCheck skipped on every node of every site.  Now each recipe installs the reader's
    library into the payload venv (after activating it), and the acceptance and health jobs run
    the reader with that venv's interpreter, in the environment that built it (LUMI: the rocm
    module whose ROCM_PATH has AMD SMI's package)."""
    page, install = NODESTATE_LIBRARY[system]
    lines = _bash_lines(page)
    activate = next(i for i, ln in enumerate(lines) if "source " in ln and "/bin/activate" in ln)
    assert install in lines[activate:], lines
    if system == "lumi":
        assert "rocm" in next(ln for ln in lines if ln.startswith("module load ")).split()
        # issue 54: `pip install ${ROCM_PATH}/share/amd_smi` builds in the read-only ROCm tree;
        # the package is copied to a fresh writable folder first, and installed from there
        install_at = lines.index(install)
        assert lines[install_at - 2:install_at] == ["AMDSMI_SRC=$(mktemp -d)/amd_smi",
                                                     "cp -r ${ROCM_PATH}/share/amd_smi $AMDSMI_SRC"], lines
        assert not [ln for ln in lines if ln.startswith("pip install") and "ROCM_PATH" in ln], lines
    site = SITES[system]
    for mode in ("acceptance", "health"):
        (case,) = [c for c in mode_cases(tmp_path_factory, system, mode) if c["name"].split()[0] in NODESTATE_CHECKS]
        assert case["result"] == "pass", case["fail_reason"]
        lines = job_script(case).splitlines()
        reader = next(i for i, ln in enumerate(lines) if " -m gpucomm.site.nodestate " in ln)
        assert lines[reader].startswith(f"{VENV_PYTHON} -m gpucomm.site.nodestate --expect"), lines[reader]
        for module in site.modules:  # the venv's environment, loaded before the reader
            assert f"module load {module}" in lines[:reader], (mode, module)
        for option in site.job_options:  # Alps: the uenv the venv was built on
            assert f"#SBATCH {option}" in lines, (mode, option)


# -- acceptance on a site: the per-node run scoped to the batch, the pair matrix across it (#45) --

#: the stand-in Slurm of every site (tests/slurm_standin/scontrol): a reservation of the batch
#: nid001-nid003, of which nid003 is draining; nid004 outside it, nid005 down
STANDIN = {"GPUCOMM_STANDIN_NODES": " ".join(
               f"{n}:{state}:normal,boost_usr_prod,standard-g" for n, state in (
                   ("nid001", "IDLE+RESERVED"), ("nid002", "IDLE+RESERVED"), ("nid003", "IDLE+DRAIN+RESERVED"),
                   ("nid004", "IDLE"), ("nid005", "DOWN"))),
           "GPUCOMM_STANDIN_RESERVATIONS": "gpucomm-new=nid[001-003]",
           "PATH": os.pathsep.join([str(REPO / "tests" / "slurm_standin"), os.path.dirname(sys.executable),
                                    os.environ["PATH"]])}


def acceptance_doc_commands():
    """{step: [argv]} of docs/acceptance.md's ```sh blocks of steps 1 and 2: the reframe lines,
    continuation lines joined, comments dropped (shlex), as a shell reads them."""
    text = (REPO / "docs" / "acceptance.md").read_text()
    steps = {}
    for step in ("## 1.", "## 2."):
        block = text.split(step, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
        steps[step[3]] = [shlex.split(ln, comments=True) for ln in block.splitlines()
                          if ln.strip().startswith("reframe ")]
    return steps


def _as_dry_run(argv, system):
    """A documented command as this test runs it: its options as written, on ``system``, ``-r``
    replaced by a dry run (the caller adds the prefix and report)."""
    assert argv[0] == "reframe" and argv[-1] == "-r", argv
    return ["--system", system, *argv[1:-1]]


@pytest.fixture(scope="module")
def acceptance_runs(tmp_path_factory):
    """The documented commands' dry runs, at once: step 1 on Alps (the whole per-node set), the
    pair matrix of step 2 on every site, the rest of step 2 on Alps."""
    steps = acceptance_doc_commands()
    (per_node,), (pairs, network) = steps["1"], steps["2"]
    runs = {("step1", "alps"): _as_dry_run(per_node, "alps"), ("network", "alps"): _as_dry_run(network, "alps")}
    for system in SYSTEMS:
        runs["pairs", system] = _as_dry_run(pairs, system)
    # step 2's pair matrix without its node count (-S PairMatrixCheck.num_nodes=4 left out)
    uncounted = _as_dry_run(pairs, "alps")
    at = uncounted.index("PairMatrixCheck.num_nodes=4")
    runs["pairs-uncounted", "alps"] = uncounted[:at - 1] + uncounted[at + 1:]
    return dry_runs(runs, tmp_path_factory, clean_env(SBATCH_ACCOUNT=ACCOUNT, GPUCOMM_PYTHON=VENV_PYTHON, **STANDIN))


def _nodes(script, option="--nodelist"):
    return [ln.split("=", 1)[1] for ln in script.splitlines() if ln.startswith(f"#SBATCH {option}=")]


def test_per_node_run_is_scoped_to_the_batch(acceptance_runs):
    """Old: `--distribute=all` alone, every node of the partition in any state (a job pinned to
    a DOWN node).  docs/acceptance.md step 1 as written: only the reservation's nodes Slurm can
    give (nid001, nid002; not nid003, draining, nor nid004 and nid005 outside it), each job pinned
    to its node inside the reservation, every per-node check on each."""
    cases = acceptance_runs["step1", "alps"]
    ran = [c for c in cases if c["result"] == "pass"]
    assert ran and all(c["result"] in ("pass", "skip") for c in cases)
    per_node = {}
    for case in ran:
        script = job_script(case)
        (node,) = _nodes(script)
        assert "#SBATCH --reservation=gpucomm-new" in script.splitlines(), case["display_name"]
        per_node.setdefault(node, set()).add(case["display_name"].split(" %.part")[0])
    assert sorted(per_node) == ["nid001", "nid002"]
    assert per_node["nid001"] == per_node["nid002"] and len(per_node["nid001"]) > 20
    assert any(name.startswith(NODESTATE_CHECKS) for name in per_node["nid001"])


def test_unscoped_distribution_warns_once(tmp_path):
    """`--mode acceptance --distribute=all` with no reservation, node list or exclusion takes
    every node outside reservations, the DOWN one too, and warns once per partition with the
    count of nodes it is about to take (rfm.scope); a scoped form does not warn."""
    from gpucomm.rfm.scope import unscoped_warning
    out, cases = _run(tmp_path, "alps", "--mode", "acceptance", "--distribute=all", "-n", "NodeStateCheck",
                      "--dry-run", env=clean_env(SBATCH_ACCOUNT=ACCOUNT, **STANDIN))
    assert out.returncode == 0, out.stdout[-3000:]
    assert sorted(_nodes(job_script(c))[0] for c in cases) == ["nid004", "nid005"]  # DOWN nid005 too
    (line,) = [ln for ln in out.stdout.splitlines() if "WARNING: --distribute=all without" in ln]
    assert "on 2 node(s) of alps:gh200 (every node, DOWN and DRAIN ones included)" in line
    argv = ["-c", "checks/", "--mode", "acceptance", "--distribute=all"]
    line = unscoped_warning("alps:gh200", 2, argv)
    assert line.startswith("--distribute=all without -J reservation=..., -J nodelist=... or -J exclude=...: "
                           "one job of each check on 2 node(s) of alps:gh200 (every node, DOWN and DRAIN")
    for scoped in (["-J", "reservation=x"], ["-Jnodelist=nid[1-2]"], ["--job-option=exclude=nid3"]):
        assert unscoped_warning("alps:gh200", 2, argv + scoped) is None, scoped
    assert unscoped_warning("alps:gh200", 2, ["--mode", "acceptance"]) is None  # not distributed


@pytest.mark.parametrize("system", SYSTEMS)
def test_pair_matrix_across_the_batch_has_n_node_jobs_only(acceptance_runs, system):
    """Old: docs/acceptance.md step 2 failed as written (`reframe: error: unrecognized arguments:
    --nodelist=...`), and `-S nodelist=...` put the 4-node list on the 2- and 8-node jobs.  Step 2's
    pair matrix as written: N-node jobs only, each on exactly the batch's nodes, one rank each."""
    ran = [c for c in acceptance_runs["pairs", system] if c["result"] == "pass"]
    assert ran and {c["name"].split()[0] for c in ran} == {"PairMatrixCheck"}
    for case in ran:
        lines = job_script(case).splitlines()
        assert case["num_nodes"] == 4 and "#SBATCH --nodes=4" in lines, case["display_name"]
        assert _nodes("\n".join(lines)) == ["nid[001-004]"] and "#SBATCH --ntasks-per-node=1" in lines


def test_pair_matrix_given_its_nodes_without_their_count(acceptance_runs):
    """Old: step 2 without `-S PairMatrixCheck.num_nodes=4` was "PASSED 0/0": the 1-node matrix
    ignored its node list and acceptance-network's --filter-expr (num_nodes > 1) dropped it.  Now
    the list gives the count: the same 4-node jobs, on exactly the batch's nodes."""
    ran = [c for c in acceptance_runs["pairs-uncounted", "alps"] if c["result"] == "pass"]
    assert ran and {c["name"].split()[0] for c in ran} == {"PairMatrixCheck"}
    for case in ran:
        lines = job_script(case).splitlines()
        assert case["num_nodes"] == 4 and "#SBATCH --nodes=4" in lines, case["display_name"]
        assert _nodes("\n".join(lines)) == ["nid[001-004]"] and "#SBATCH --ntasks-per-node=1" in lines


def test_network_checks_stay_in_the_reservation(acceptance_runs):
    """Step 2's other command: every job across nodes inside the reservation, none larger than
    the batch (-S max_nodes), the pair matrix left to the first command."""
    cases = acceptance_runs["network", "alps"]
    ran = [c for c in cases if c["result"] == "pass"]
    assert ran and "PairMatrixCheck" not in {c["name"].split()[0] for c in ran}
    for case in ran:
        lines = job_script(case).splitlines()
        assert "#SBATCH --reservation=gpucomm-new" in lines and 1 < case["num_nodes"] <= 4, case["display_name"]


def test_a_node_list_of_another_size_skips_with_its_reason():
    """`-S nodelist=nid[001-004]` on a 2-node check: a skip naming both counts, not a job asking
    Slurm for 2 nodes out of 4 named ones."""
    from gpucomm.rfm.mixins import MultiNode

    class PingPong:  # the attributes node_count_reason reads
        multi_node, real_nodes, nodelist = True, 2, "nid[001-004]"
        current_partition = type("P", (), {"extras": {}, "fullname": "alps:gh200", "access": []})()

        def placement_options(self):
            return ["--nodelist=nid[001-004]"]
    reason = MultiNode.node_count_reason(PingPong())
    assert reason == ("-S nodelist=nid[001-004] names 4 node(s), this job takes 2: give the list to the "
                      "checks of 4 nodes (-S PingPong.nodelist=..., docs/acceptance.md step 2)")
    four = PingPong()
    four.real_nodes = 4
    assert MultiNode.node_count_reason(four) is None


def test_alps_recipe_leaves_the_uenv_before_reframe():
    """Old: docs/sites/alps.md built the venv inside `uenv start` and never said to leave it,
    where sbatch refuses to run ("Calling sbatch/salloc from inside a uenv session is disabled by
    default": cscs-docs uenv/using.md), nor where ReFrame runs.  Now the recipe exits the uenv
    after the payload venv, and ReFrame's own venv is built and run outside it."""
    lines = _bash_lines("alps.md")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("uenv start "))
    leave = next(i for i, ln in enumerate(lines) if ln == "exit" and i > start)
    rfm = [i for i, ln in enumerate(lines) if re.search(r"(^|\s)reframe\s", ln)]
    assert rfm and all(i > leave for i in rfm), lines
    assert not any(ln.startswith("uenv start ") for ln in lines[leave:]), lines
    assert any("venv" in ln and "gpucomm-rfm" in ln for ln in lines[leave:rfm[0]])
    assert any("[rfm" in ln for ln in lines[leave:rfm[0]])  # ReFrame comes with the [rfm] extra
