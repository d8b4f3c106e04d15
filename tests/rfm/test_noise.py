"""The noise study (checks/noise.py over rfm.noise.NoiseBase): a victim quiet, then under an
aggressor on other nodes.

* the layout's sanity from the runs' placement records (fabricated here);
* the whole job for real on this machine, victim and aggressor as rank groups
  (-S emulate_nodes=y): both victim runs, the aggressor's report, the perf variables; an
  aggressor that ran out of time before the victim is a failure, never a pass;
* opt-in: skipped without the noise mode, selected by it, excluded by the nightly modes;
* the job scripts of Alps, Leonardo and LUMI (node counts, layouts, service level).

On the multi-node CI cluster it runs for real in tests/slurm/.
"""

import json
import os
import re
import subprocess

import pytest
import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError, SkipTestError

from gpucomm.rfm.noise import aggressor_fragment, layout_ok, leaf_switch, victim_layout_ok
from reframe_helpers import clean_env, dry_runs, job_script, reframe, report_cases
from test_sites import BIND, SITES, VENV_PYTHON, expected_script, site_env

LOCAL = ["-S", "emulate_nodes=y", "-S", "large_size=64K", "-S", "aggressor_size=64K",
         "-S", "aggressor_ranks_per_node=1", "-S", "iters=40"]
PERF = ("quiet_time", "noisy_time", "victim_slowdown", "victim_spread", "quiet_spread")


# -- the layout's sanity ---------------------------------------------------------------------

def _results(path, addrs, distance):
    path.write_text(json.dumps({"meta": {"placement": {
        "hosts": [a.rsplit(".", 1)[-1] if a else "?" for a in addrs], "topology_addr": list(addrs),
        "distance": distance, "source": "SLURM_TOPOLOGY_ADDR"}}}))
    return str(path)


@pytest.mark.parametrize("layout,victim,aggressor,error", [
    ("shared-link", ("top.l1.n1", "top.l2.n3"), ("top.l1.n2", "top.l2.n4"), None),
    ("apart", ("top.l1.n1", "top.l1.n2"), ("top.l2.n3", "top.l2.n4"), None),
    ("same-switch", ("top.l1.n1", "top.l1.n2"), ("top.l1.n3", "top.l1.n4"), None),
    # the victim not where the layout says
    ("shared-link", ("top.l1.n1", "top.l1.n2"), ("top.l2.n3", "top.l2.n4"),
     "the victim's nodes should be different-switch, they are same-switch"),
    # the aggressor on the victim's switch where it should be elsewhere, and the reverse
    ("apart", ("top.l1.n1", "top.l1.n2"), ("top.l1.n3", "top.l2.n4"),
     "should be on other leaf switches than the victim, it shares top.l1"),
    ("shared-link", ("top.l1.n1", "top.l2.n3"), ("top.l2.n2", "top.l2.n4"),
     r"should be on the victim's leaf switches \(top.l1, top.l2\), it is on top.l2"),
])
def test_layout_sanity(tmp_path, layout, victim, aggressor, error):
    dist = "same-switch" if leaf_switch(victim[0]) == leaf_switch(victim[1]) else "different-switch"
    v = _results(tmp_path / "v.json", victim, dist)
    a = _results(tmp_path / "a.json", aggressor, "any")
    if error is None:
        assert sn.evaluate(layout_ok(v, a, layout))
    else:
        with pytest.raises(SanityError, match=error):
            sn.evaluate(layout_ok(v, a, layout))


def test_a_misplaced_victim_is_the_reason_even_when_the_aggressor_never_started(tmp_path):
    """Old: a victim inside one switch for shared-link whose aggressor did not start (its steps
    not ready in time on a loaded machine) failed with "the aggressor did not start its load",
    hiding that the job measured nothing the layout asked for.  The victim's placement is judged
    first, from the quiet run alone; without it (the quiet run failed) that failure speaks."""
    v = _results(tmp_path / "v.json", ("top.l1.n1", "top.l1.n2"), "same-switch")
    with pytest.raises(SanityError, match="the victim's nodes should be different-switch, they are "
                                          r"same-switch: n1 \(top.l1.n1\), n2 \(top.l1.n2\)$"):
        sn.evaluate(victim_layout_ok(v, "shared-link"))
    assert sn.evaluate(victim_layout_ok(v, "apart"))
    assert sn.evaluate(victim_layout_ok(str(tmp_path / "none.json"), "shared-link"))
    # a distance the job cannot tell is no verdict here (layout_ok's skip, after the runs' own)
    u = _results(tmp_path / "u.json", (None, None), "unknown")
    assert sn.evaluate(victim_layout_ok(u, "shared-link"))


def test_layout_unconfirmed_is_a_skip(tmp_path):
    v = _results(tmp_path / "v.json", (None, None), "unknown")
    a = _results(tmp_path / "a.json", (None, None), "unknown")
    with pytest.raises(SkipTestError, match="cannot confirm it"):
        sn.evaluate(layout_ok(v, a, "apart"))
    # where the partition says Slurm reports its topology, an unconfirmed layout fails
    with pytest.raises(SanityError, match=r"cannot confirm it .* \(extras\['topology'\] = tree\)"):
        sn.evaluate(layout_ok(v, a, "apart", "tree"))


# -- on this machine, emulated ---------------------------------------------------------------

def _local(tmp_path, *args, name="NoiseCheck%method=host%victim=pingpong%layout=apart"):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/noise.py", "-n", name, "-r", "--prefix", tmp_path,
                  "--report-file", report, *args,
                  env=clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1))
    return run, report_cases(report)


@pytest.mark.parametrize("victim", ["pingpong", "allreduce"])
def test_local_emulated_victim_and_aggressor(tmp_path, victim):
    run, (case,) = _local(tmp_path, "--mode", "noise", *LOCAL,
                          name=f"NoiseCheck%method=host%victim={victim}%layout=apart")
    assert run.returncode == 0, run.stdout[-3000:]
    assert case["result"] == "pass", case["fail_reason"]
    out = case["outputdir"]
    script = open(os.path.join(out, "rfm_job.sh")).read()
    # quiet victim, aggressor in the background, wait for its load, noisy victim, stop it
    # (gpucomm_aggressor_up: rfm/aggressor.sh, then its call with this job's files)
    order = ["--json gpucomm_quiet.json", "gpucomm aggressor", "until gpucomm_ready",
             "\ngpucomm_aggressor_up gpucomm_aggressor.ready gpucomm_aggressor.err 120 2 'gpucomm: error:'\n",
             "--json gpucomm_noisy.json", "touch gpucomm_aggressor.stop\nwait $gpucomm_aggressor\n"]
    at = [script.index(s) for s in order]
    assert at == sorted(at), script
    assert script.count("mpirun -np 2 ") == 3 and "--ranks-per-node 1" in script
    agg = [ln for ln in open(os.path.join(out, "gpucomm_aggressor.out")) if "GPUCOMM-RESULT" in ln]
    rec = json.loads(agg[-1].split(" ", 1)[1])
    assert rec["ended"] == "stop-file" and rec["validated"] and rec["bytes_moved"] > 0
    perf = case["perfvalues"]
    for size in ("8B", "64KiB"):
        for name in PERF:
            assert perf[f"local:cpu:{name}_{size}"][0] > 0
        slowdown = perf[f"local:cpu:victim_slowdown_{size}"][0]
        assert slowdown == pytest.approx(perf[f"local:cpu:noisy_time_{size}"][0] /
                                         perf[f"local:cpu:quiet_time_{size}"][0])
    assert perf["local:cpu:aggressor_GBps"][0] == pytest.approx(rec["goodput_GBps"])


@pytest.mark.parametrize("aggressor, rc, out, err", [  # regular expressions (bash's SECONDS: whole s)
    # ready at once: the load is on, one start
    ("touch ready; sleep 5", 0, "", ""),
    # exits without its load: started again, then the job ends with one error line that says
    # it exited, and when (old: "in 3 s", whenever it ended)
    ("echo failed >&2", 1, r"gpucomm: the aggressor did not start its load \(it exited after [01] s\): attempt 2\n",
     r"gpucomm: error: the aggressor did not start its load: it exited after [01] s, attempt 2 of 2 \(see err\)\n"),
    # runs without its load: the timeout
    ("exec sleep 30", 1, r"gpucomm: the aggressor did not start its load \(no load within 3 s\): attempt 2\n",
     r"gpucomm: error: the aggressor did not start its load: no load within 3 s, attempt 2 of 2 \(see err\)\n"),
])
def test_the_job_scripts_aggressor_start(tmp_path, aggressor, rc, out, err):
    """rfm/aggressor.sh as the job script runs it: gpucomm_aggressor_up READY ERR TIMEOUT STARTS
    PREFIX over the job's gpucomm_start; a failed attempt's stderr is kept as ERR.<attempt>."""
    script = "\n".join([f"gpucomm_start() {{ ( {aggressor} ) 2>err & gpucomm_aggressor=$!; }}",
                        aggressor_fragment(),
                        "gpucomm_aggressor_up ready err 3 2 'gpucomm: error:'",
                        "kill $gpucomm_aggressor 2>/dev/null; wait"])
    run = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == rc and re.fullmatch(out, run.stdout) and re.fullmatch(err, run.stderr), \
        (run.returncode, run.stdout, run.stderr)
    assert (tmp_path / "err.1").exists() == bool(rc)


def test_aggressor_that_stops_before_the_victim_fails_the_check(tmp_path):
    # a 1 s aggressor against a victim of many iterations: the noisy numbers would be partly
    # quiet, so the check fails saying so
    run, (case,) = _local(tmp_path, "--mode", "noise", *LOCAL[:-2], "-S", "iters=20000",
                          "-S", "aggressor_duration=1")
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "the aggressor ended (duration" in case["fail_reason"]
    assert "raise -S aggressor_duration" in case["fail_reason"]


def test_aggressor_that_cannot_start_fails_with_its_reason(tmp_path):
    run, (case,) = _local(tmp_path, "--mode", "noise", *LOCAL, "-S", "aggressor_size=1T")
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    reason = case["fail_reason"]
    assert re.search(r"the noisy victim run did not finish: the aggressor did not start its load: "
                     r"it exited after \d+ s, attempt 2 of 2", reason), reason
    assert "the aggressor failed: rank 0: --sizes up to 1099511627776 B needs" in reason


def test_bad_aggressor_options(tmp_path):
    # the aggressor's method must be available too; streams need an even number of nodes
    run, (case,) = _local(tmp_path, "--mode", "noise", *LOCAL, "-S", "aggressor_nodes=3",
                          "-S", "aggressor_pattern=alltoall", "-S", "aggressor_method=ccl")
    assert case["result"] == "skip"  # ccl needs GPUs: the aggressor's method is checked too
    run, (case,) = _local(tmp_path / "b", "--mode", "noise", *LOCAL, "-S", "aggressor_nodes=3")
    assert case["result"] == "fail" and case["fail_phase"] == "setup"
    assert "3 aggressor nodes is odd" in case["fail_reason"]


# -- opt-in ----------------------------------------------------------------------------------

def test_skipped_unless_asked_for(tmp_path):
    """A plain run never loads the network: every NoiseCheck skips itself when it is loaded,
    saying how to opt in (reframe -v shows it), so none runs."""
    run = reframe("-c", "checks/noise.py", "-n", "NoiseCheck", "-r", "-v", "--prefix", tmp_path)
    assert run.returncode == 0, run.stdout[-2000:]
    reason = ("skipping test 'NoiseCheck': the noise check loads the network: opt in with "
              "--mode noise (or -S load_fabric=y)")
    assert run.stdout.count(reason) >= 4 * 2 * 3  # every variant (methods x layouts x roles)
    assert "Ran 0/0 test case(s)" in run.stdout


@pytest.mark.parametrize("mode,selected", [(None, False), ("noise", True), ("acceptance", False),
                                           ("paper", False), ("health", False)])
def test_modes_select_it_only_in_the_noise_mode(mode, selected):
    out = reframe("--system", "alps", "-c", "checks/", *(["--mode", mode] if mode else []), "-l",
                  env=site_env())
    assert out.returncode == 0, out.stdout
    listed = [ln for ln in out.stdout.splitlines() if ln.startswith("- ")]
    assert listed and any(ln.split()[1] == "NoiseCheck" for ln in listed) == selected
    if selected:
        assert all(ln.split()[1] == "NoiseCheck" for ln in listed)


# -- the sites' job scripts ------------------------------------------------------------------

NODELISTS = ["-S", "victim_nodelist=nid[001,101]", "-S", "aggressor_nodelist=nid[002,102]"]


@pytest.fixture(scope="module")
def site_runs(tmp_path_factory):
    runs = {}
    for system in SITES:
        base = ["--system", system, "-c", "checks/noise.py", "--mode", "noise"]
        runs[system, "layouts"] = base + ["-n", "NoiseCheck%method=ccl"]
        runs[system, "nodelists"] = base + ["-n", "NoiseCheck%method=ccl%victim=pingpong%layout=shared-link",
                                            *NODELISTS]
    for to in ("victim", "aggressor", "both"):
        runs["leonardo", to] = ["--system", "leonardo", "-c", "checks/noise.py", "--mode", "noise",
                                "-n", "NoiseCheck%method=ccl%victim=pingpong%layout=same-switch",
                                "-S", "service_level=5", "-S", f"service_level_to={to}"]
    return dry_runs(runs, tmp_path_factory, site_env())


def step(site, role, victim, op_args, nodes="--relative=0", env=""):
    """One srun step line of the noise job."""
    p = (1 if victim == "pingpong" else site.gpus) if role == "victim" else site.gpus
    words = ([env.strip()] if env else []) + [
        "srun", "--nodes=2", f"--ntasks={2 * p}", f"--ntasks-per-node={p}", nodes, *site.srun, BIND,
        VENV_PYTHON, "-m", "gpucomm", *op_args]
    return " ".join(w for w in words if w)


def noise_lines(site, case, victim_nodes="--relative=0", aggressor_nodes="--relative=2",
                victim_env="", aggressor_env=""):
    victim = case["victim"]
    guard = site.link_GBps if victim == "pingpong" else site.gpu_GBps
    net = {"alps:gh200": 100, "leonardo:booster": 50, "lumi:standard-g": 100}[site.partition]
    run = [victim, "--method", "ccl", "--sizes", "8,16777216", "--json", "{json}", "--timeout", "210",
           "--max-bandwidth", f"{guard:g}"]
    quiet = step(site, "victim", victim, run, victim_nodes, victim_env).replace("{json}", "gpucomm_quiet.json")
    noisy = step(site, "victim", victim, run, victim_nodes, victim_env).replace("{json}", "gpucomm_noisy.json")
    agg = step(site, "aggressor", victim, [
        "aggressor", "--method", "ccl", "--sizes", "16M", "--pattern", "streams", "--duration", "480",
        "--ready-file", "gpucomm_aggressor.ready", "--stop-file", "gpucomm_aggressor.stop",
        "--json", "gpucomm_aggressor.json", "--quiet", "--timeout", "540", "--max-bandwidth", f"{net:g}"],
        aggressor_nodes, aggressor_env)
    return ["rm -f gpucomm_aggressor.ready gpucomm_aggressor.stop", quiet,
            f"gpucomm_start() {{ {agg} >gpucomm_aggressor.out 2>gpucomm_aggressor.err & "
            "gpucomm_aggressor=$!; }",
            # wait for its load, start it again (test_the_job_scripts_aggressor_start)
            *aggressor_fragment().splitlines(),
            "gpucomm_aggressor_up gpucomm_aggressor.ready gpucomm_aggressor.err 120 2 'gpucomm: error:'",
            noisy, "touch gpucomm_aggressor.stop", "wait $gpucomm_aggressor"]


def _assert_script(site, case, placement, **kw):
    name = case["display_name"]
    assert case["result"] == "pass", f"{name}: {case['fail_reason']}"
    got = job_script(case).splitlines()
    # the header as every check of the site has it: 4 nodes, every GPU of a node per node
    want = expected_script(site, case, p=site.gpus, placement=placement)[:-1] + noise_lines(site, case, **kw)
    assert len(got) == len(want), f"{name}: {len(got)} lines, want {len(want)}:\n" + "\n".join(got)
    for i, (g, w) in enumerate(zip(got, want), 1):
        if w is not None:
            assert g == w, f"{name}, rfm_job.sh line {i}:\n  got:  {g}\n  want: {w}"


@pytest.mark.parametrize("system", SITES)
def test_site_layouts(site_runs, system):
    """Victim (2 nodes) + aggressor (2 nodes) in one job: all on one leaf switch through
    --switches=1; the other layouts need given nodes and skip saying so."""
    site = SITES[system]
    cases = site_runs[system, "layouts"]
    assert {(c["victim"], c["layout"]) for c in cases} == {
        (v, lay) for v in ("pingpong", "allreduce") for lay in ("shared-link", "same-switch", "apart")}
    for case in cases:
        assert case["num_nodes"] == 4
        if case["layout"] != "same-switch":
            assert case["result"] == "skip" and job_script(case) is None
            continue
        _assert_script(site, case, ["--switches=1"])


@pytest.mark.parametrize("system", SITES)
def test_site_given_nodes(site_runs, system):
    (case,) = site_runs[system, "nodelists"]
    _assert_script(SITES[system], case, ["--nodelist=nid[001,101],nid[002,102]"],
                   victim_nodes="--nodelist=nid[001,101]", aggressor_nodes="--nodelist=nid[002,102]")


@pytest.mark.parametrize("to", ["victim", "aggressor", "both"])
def test_leonardo_service_level_per_role(site_runs, to):
    """-S service_level=5 goes to the steps service_level_to names, never to the whole job."""
    (case,) = site_runs["leonardo", to]
    sl = "NCCL_IB_SL=5 UCX_IB_SL=5 "
    _assert_script(SITES["leonardo"], case, ["--switches=1"],
                   victim_env=sl if to in ("victim", "both") else "",
                   aggressor_env=sl if to in ("aggressor", "both") else "")
    assert "export NCCL_IB_SL" not in job_script(case)
