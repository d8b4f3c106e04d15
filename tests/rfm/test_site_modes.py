"""Every site in every mode (config/modes.py), with GPUCOMM_PYTHON and, in the modes whose scripts
write the interpreter their own way, without it: the job scripts a dry run writes read right
against the site's sources (docs/sites/SOURCES.md).

What each script must say, whatever the check: the account and partition, the site's software
(modules or uenv), a preflight before every payload launch with the same interpreter (the venv,
or the placeholder a dry run without one writes, said once), each launch's variables its
methods' own (NCCL's, libfabric's and NVSHMEM's only where ccl or nvshmem runs, GPU support only
for gpu-aware-mpi on Cray MPICH), one GPU per task except ipc-copy, the network plugin proven
before a ccl launch, the paper's tuning in the paper mode only, and the topology record of a
placed multi-node job.  The line-by-line scripts of the default mode are in test_sites.py.
"""

import runpy

import pytest

from gpucomm.constants import PYTHON_PLACEHOLDER
from reframe_helpers import NATIVE_CHECKS, NICPATH_CHECKS, NODESTATE_CHECKS, REPO, job_script
from test_sites import (
    ACCOUNT,
    PAPER_ENV,
    SITES,
    TOPOLOGY_LINE,
    VENV_PYTHON,
    launch_environments,
    mode_cases,
    mode_output,
)

#: the modes of config/modes.py, those with the same options once (nightly is health)
_MODES = runpy.run_path(str(REPO / "config" / "modes.py"))["site_configuration"]["modes"]
MODES = []
for _mode in _MODES:
    if not any(m["options"] == _mode["options"] for m in _MODES[:_MODES.index(_mode)]):
        MODES.append(_mode["name"])
#: Leonardo's InfiniBand service level, set for every method as the paper's conf/leonardo.sh does
SERVICE_LEVEL_VARS = ("NCCL_IB_SL", "UCX_IB_SL")
#: variables a launch may carry only where one of these methods runs
OWN_PREFIXES = {"ccl": ("NCCL_", "FI_CXI_", "FI_MR_", "CXI_FORK_SAFE"), "nvshmem": ("NVSHMEM_",)}
#: the modes also dry-run without GPUCOMM_PYTHON (the placeholder instead of the venv): those
#: whose scripts write the interpreter each in its own way (health: a launch per method group;
#: acceptance: every other check of a node, the soak; noise: the aggressor's script).  The others
#: (acceptance-network, paper: the scaling checks, 25 s of a site's 60 s of dry runs) run checks
#: whose interpreter line is the base check's, as in acceptance: with the venv only.
VENV_LESS_MODES = ("health", "acceptance", "noise")


def mode_runs(system, tmp_path_factory):
    """{(mode, with python): [test cases]} of one site, every mode as configured (the paper
    mode's scaling to 512 nodes included), the session's shared dry runs (test_sites.mode_cases)."""
    return {(mode, venv): mode_cases(tmp_path_factory, system, mode, venv)
            for venv in (True, False) for mode in MODES if venv or mode in VENV_LESS_MODES}


@pytest.mark.parametrize("system", sorted(SITES))
def test_no_mode_sets_a_variable_a_check_lacks(tmp_path_factory, system):
    """Issue 54: every acceptance session printed "test 'NodeStateCheck': the following
    variables were not set: 'validate_every', 'validate_sizes', 'soak_where_swept'" (the soak's
    unscoped -S), and the paper mode's max_nodes=512 the same for nine checks: each mode's -S
    now names the checks that have the variable (config/modes.py), in every mode's output none."""
    mode_runs(system, tmp_path_factory)
    for venv in (True, False):
        for mode in MODES:
            if venv or mode in VENV_LESS_MODES:
                out = mode_output(tmp_path_factory, system, mode, venv)
                assert "variables were not set" not in out, (mode, venv, [
                    ln for ln in out.splitlines() if "variables were not set" in ln])


def test_modes_are_the_configured_ones():
    assert {"health", "acceptance", "paper", "noise"} <= set(MODES)
    assert set(VENV_LESS_MODES) <= set(MODES)
    names = [m["name"] for m in _MODES]
    assert set(names) - set(MODES) <= {"nightly"}  # the same options as health


def _assert_reads_right(system, mode, venv, case):
    site, name = SITES[system], case["display_name"]
    script = job_script(case)
    assert script, f"{name}: no job script"
    lines = script.splitlines()
    python = VENV_PYTHON if venv else PYTHON_PLACEHOLDER.format(recipe=site.recipe)
    assert f"#SBATCH --account={ACCOUNT}" in lines, name
    assert any(ln.startswith("#SBATCH --partition=") for ln in lines), name
    for module in site.modules:
        assert f"module load {module}" in lines, f"{name}: {module}"
    for option in site.job_options:
        assert f"#SBATCH {option}" in lines, f"{name}: {option}"
    if case["name"].split()[0] == "NodeAcceptanceCheck":  # its inner checks' blocks: test_node_job_dry.py
        assert script.count('echo "GPUCOMM-NODE-CHECK ') > 20, name
        return
    if case["name"].split()[0] in NODESTATE_CHECKS:  # no launch: the reader runs in the script
        assert f"{python} -m gpucomm.site.nodestate --expect" in script, name
        return
    if case["name"].split()[0] in NATIVE_CHECKS:  # the site's OSU / nccl-tests, no payload
        # Alps: the tools are in the uenv's view, mounted only where the job runs: the job finds
        # them there before the launch (cscs-docs prgenv-gnu.md, uenv using.md)
        view = "/user-environment/env/default" if system == "alps" else None
        launch = next(i for i, ln in enumerate(lines) if ln.startswith("srun "))
        if view:
            assert lines[launch - 2].startswith(f"GPUCOMM_TOOL=$(find -L '{view}' -maxdepth 6 -type f -name '"), name
            assert lines[launch - 1].startswith('[ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING '), name
            assert ' "$GPUCOMM_TOOL" ' in lines[launch], name
        return
    launches = launch_environments(script)
    assert launches, name
    srun = [i for i, ln in enumerate(lines) if ln.startswith("srun ") and " -m gpucomm " in ln]
    for i, (methods, env) in zip(srun, launches):
        before = [ln for ln in lines[:i] if " -m gpucomm preflight " in ln]
        assert before and before[-1].startswith(f"{python} -m gpucomm preflight --method "
                                                f"{','.join(methods)} "), f"{name}: {lines[i]}"
        assert f" {python} -m gpucomm " in lines[i], name
        for method, prefixes in OWN_PREFIXES.items():
            # NicPathCheck pins MPICH's NIC through libfabric too (FI_CXI_DEVICE_NAME), on purpose;
            # the service level is every method's (conf/leonardo.sh)
            if method not in methods and case["name"].split()[0] not in NICPATH_CHECKS:
                own = [v for v in env if v.startswith(prefixes) and v not in SERVICE_LEVEL_VARS]
                assert not own, f"{name} {methods}: {own} are {method}'s"
        if "ccl" in methods:
            assert "NCCL_DEBUG_FILE" in env and (not site.net_plugin or
                                                 f"--net-plugin {site.net_plugin}" in before[-1]), name
        visible = f"GPUCOMM_BIND_{site.visible}"
        if "ipc-copy" not in methods:
            assert visible in env, f"{name} {methods}: no GPU binding"
        if "ipc-copy" in methods:
            assert visible not in env, f"{name}: ipc-copy's ranks must see every GPU"
        if site.method_env.get("host", {}).get("MPICH_GPU_SUPPORT_ENABLED"):  # Cray MPICH
            want = "1" if methods == ["gpu-aware-mpi"] else "0"
            assert env.get("MPICH_GPU_SUPPORT_ENABLED") == want, f"{name} {methods}"
        for method in methods:
            for var, value in PAPER_ENV[system].get(method, {}).items():
                assert (env.get(var) == value) == (mode == "paper"), f"{name}: {var} in {mode}"
    placed = (case.get("num_nodes") or 1) > 1 and case.get("placement", "any") != "any"
    assert (TOPOLOGY_LINE in lines) == placed, name


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("system", SITES)
def test_every_mode_writes_scripts_that_read_right(tmp_path_factory, system):
    """One site: its dry runs in every mode, with and without the venv, each case's script."""
    runs = mode_runs(system, tmp_path_factory)
    for (mode, venv), cases in runs.items():
        ran = [c for c in cases if c["result"] == "pass"]
        failed = [(c["display_name"], c["fail_reason"]) for c in cases if c["result"] == "fail"]
        assert ran and not failed, (mode, venv, failed)
        for case in ran:
            _assert_reads_right(system, mode, venv, case)
        # the same test cases run with and without the venv: only the interpreter differs
        if (mode, not venv) in runs:
            other = {c["display_name"] for c in runs[mode, not venv] if c["result"] == "pass"}
            assert {c["display_name"] for c in ran} == other, (mode, venv)
