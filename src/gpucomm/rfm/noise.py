"""The noise study's base (checks/noise.py): a victim measured quiet, then again while an
aggressor loads the network from other nodes, in one job.

One allocation holds the victim's 2 nodes and the aggressor's nodes; the job script runs, as
separate job steps on disjoint nodes (srun --nodelist / --relative; no --overlap needed, and no
heterogeneous job, which ReFrame cannot write and not every site allows):

1. the victim alone (``quiet``): ``gpucomm <victim>`` at ``small_size`` and ``large_size``;
2. the aggressor in the background (``gpucomm aggressor``, ops/aggressor.py), its output in
   gpucomm_aggressor.{out,err,json}; the script waits until it writes its ready file (the load is
   on); one that is not ready within ``ready_timeout`` is killed and started again, up to
   ``aggressor_starts`` times (a launch that hung in its start-up, e.g. Slurm's PMIx fence on
   the CI cluster), then the job ends with the reason (the stdout names every new attempt, the
   failed attempts' stderr stays in gpucomm_aggressor.err.<k>).  That logic is the bash of
   aggressor.sh beside this module (package data), written into the job script as it is, then
   called with this job's files, ``ready_timeout``, ``aggressor_starts`` and the error prefix;
3. the victim again (``noisy``); then the stop file ends the aggressor and the script waits for
   it.  An aggressor that ran out of time before the victim finished is a failure: the noisy
   numbers would be partly quiet.

Both victim runs print to the job's stdout (two launches, in order); the sanity requires both to
finish and validate every size, the aggressor to finish, validate and still run at the end, and,
on real nodes, the placement the layout promised (Slurm's SLURM_TOPOLOGY_ADDR, as
sanity.placement_ok): the victim's own distance, and the aggressor on the victim's leaf switches
or on others.

Perf variables, per victim size L (sizes.size_label): ``quiet_time_L`` and ``noisy_time_L`` (the
median time, us), ``victim_slowdown_L`` = noisy / quiet median, ``victim_spread_L`` and
``quiet_spread_L`` = (p95 - p05) / median of that run, and ``aggressor_GBps`` (what the aggressor
moved per second, all ranks).  References (config/references/<system>.yaml) are indexed by
partition, victim and layout: the ratio is what a site bounds.

Layouts (constants.NOISE_LAYOUTS): ``shared-link`` (victim across two leaf switches, aggressor on
the same two, crossing the same inter-switch links), ``same-switch`` (everything on one leaf
switch), ``apart`` (victim in one switch, aggressor on others).  The nodes come from
``-S victim_nodelist=... -S aggressor_nodelist=...``, else from the partition's
extras['noise']['layouts'][layout]: ``job`` (sbatch options, e.g. --switches=1) and optionally
``victim`` / ``aggressor`` node lists (without them: the allocation's first 2 nodes for the
victim, the rest for the aggressor); extras['noise']['aggressor_env'] ({VAR: value}) is set on
the aggressor's step only (the CI cluster: more TCP connections per peer).  A layout the
partition cannot ask for is a skip naming the variables to give.
"""

import json
import os
import shlex
from importlib import resources

import reframe.utility.sanity as sn
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_before, variable
from reframe.core.exceptions import ReframeError, SanityError, SkipTestError
from reframe.core.launchers.mpi import SrunLauncher

from ..constants import (
    AGGRESSOR,
    ALLREDUCE,
    HOST,
    METHODS,
    NOISE_LAYOUTS,
    OTHER_SWITCHES,
    PINGPONG,
    SERVICE_LEVEL_TARGETS,
    Extras,
)
from ..contract import ERROR_PREFIX, NOISE_FILES, parse_output, record_value
from ..errors import GpucommError
from ..sizes import parse_size, size_label
from .availability import unavailable
from .base import GpucommCheck
from .sanity import launches, not_finished_reason, payload_error, preflight_ok, read_text

#: the victim's nodes (a pair; an all-reduce uses every GPU of both)
VICTIM_NODES = 2
#: the files of one noise job (stage directory)
QUIET_JSON, NOISY_JSON, AGGRESSOR_JSON = (NOISE_FILES[k] for k in ("quiet", "noisy", "aggressor"))
AGGRESSOR_OUT, AGGRESSOR_ERR = "gpucomm_aggressor.out", "gpucomm_aggressor.err"
READY_FILE, STOP_FILE = "gpucomm_aggressor.ready", "gpucomm_aggressor.stop"
VICTIM_OPS = (PINGPONG, ALLREDUCE)
PATTERNS = ("streams", "alltoall")
#: the job script's aggressor start, a bash fragment shipped beside this module
AGGRESSOR_SH = "aggressor.sh"


def aggressor_fragment():
    """The job-script lines of aggressor.sh: gpucomm_aggressor_up and its helper (the file says
    what they do and what they take)."""
    return resources.files(__package__).joinpath(AGGRESSOR_SH).read_text().rstrip("\n")


def leaf_switch(addr):
    """The leaf switch of a SLURM_TOPOLOGY_ADDR (the path without the node)."""
    return addr.rsplit(".", 1)[0] if addr and "." in addr else None


def _placement(path):
    try:
        with open(path) as fp:
            return json.load(fp)["meta"]["placement"]
    except (OSError, ValueError, KeyError) as exc:
        raise SanityError(f"no placement record in {os.path.basename(path)}: {exc}") from exc


@sn.deferrable
def victim_layout_ok(victim_json, layout, topology=None):
    """layout_ok's verdict on the victim's nodes alone, judged first: a victim at the wrong
    distance makes every number of the job meaningless, whatever the aggressor did (which
    may not have started at all).  True where the quiet run wrote no placement (its own
    failure is then the reason noise_ok gives), and where the job cannot tell the distance:
    that is layout_ok's to judge after noise_ok, so that a run that failed is never a skip."""
    if not os.path.exists(victim_json):
        return True
    victim = _placement(victim_json)
    if victim["distance"] == "unknown" or any(a is None for a in victim["topology_addr"]):
        return True
    return _layout_verdict(victim, None, layout, topology)


@sn.deferrable
def layout_ok(victim_json, aggressor_json, layout, topology=None):
    """True if the victim's nodes are at the layout's distance and the aggressor's nodes on the
    victim's leaf switches (or on others, for ``apart``); a SanityError naming the nodes where
    not; a skip where the job cannot tell (no SLURM_TOPOLOGY_ADDR), a SanityError instead where
    the partition says Slurm reports its topology (``topology``, as sanity.placement_ok)."""
    return _layout_verdict(_placement(victim_json), _placement(aggressor_json), layout, topology)


def _layout_verdict(victim, aggressor, layout, topology):
    """layout_ok on placements already read; without ``aggressor``, the victim's part alone."""
    want_victim, where = NOISE_LAYOUTS[layout]
    theirs_placement = aggressor or {"hosts": [], "topology_addr": []}
    addrs = victim["topology_addr"] + theirs_placement["topology_addr"]
    if victim["distance"] == "unknown" or any(a is None for a in addrs):
        if topology:
            raise SanityError(f"layout {layout} asked for, but the job cannot confirm it "
                              f"({victim.get('source', 'no topology information')}) on a partition "
                              f"whose Slurm reports its topology (extras['topology'] = {topology})")
        raise SkipTestError(f"layout {layout} asked for, but the job cannot confirm it "
                            f"({victim.get('source', 'no topology information')}): give the nodes "
                            "with -S victim_nodelist=... -S aggressor_nodelist=...")
    nodes = ", ".join(f"{h} ({a})" for h, a in zip(victim["hosts"] + theirs_placement["hosts"], addrs))
    if victim["distance"] != want_victim:
        raise SanityError(f"layout {layout}: the victim's nodes should be {want_victim}, they are "
                          f"{victim['distance']}: {nodes}")
    if aggressor is None:
        return True
    mine = {leaf_switch(a) for a in victim["topology_addr"]}
    theirs = {leaf_switch(a) for a in aggressor["topology_addr"]}
    if where == OTHER_SWITCHES and mine & theirs:
        raise SanityError(f"layout {layout}: the aggressor should be on other leaf switches than "
                          f"the victim, it shares {', '.join(sorted(mine & theirs))}: {nodes}")
    if where != OTHER_SWITCHES and theirs != mine:
        raise SanityError(f"layout {layout}: the aggressor should be on the victim's leaf switches "
                          f"({', '.join(sorted(mine))}), it is on {', '.join(sorted(theirs))}: {nodes}")
    return True


def victim_runs(stdout, stderr, sizes):
    """(quiet records, noisy records) by size; a SanityError with the reason unless both victim
    runs finished and validated every size."""
    runs = launches(read_text(stdout))
    done = [(recs, s) for recs, s in runs if s is not None]
    for name, (_recs, summary) in zip(("quiet", "noisy"), done):
        if not summary.get("ok"):
            raise SanityError(f"the {name} victim run failed: "
                              f"{summary.get('error') or payload_error(stderr)}")
    if len(done) < 2:
        which = "quiet" if not done else "noisy"
        reason = not_finished_reason(stderr)
        raise SanityError(f"the {which} victim run did not finish: {reason}")
    out = []
    for name, (recs, _) in zip(("quiet", "noisy"), done[:2]):
        by = {r["size"]: r for r in recs}
        missing = [size_label(s) for s in sizes if not by.get(s, {}).get("validated")]
        if missing:
            raise SanityError(f"{name} victim run: sizes not validated: {', '.join(missing)}")
        out.append(by)
    return out[0], out[1]


def aggressor_run(stagedir):
    """The aggressor's record; a SanityError with its reason unless it finished, validated and
    was ended by the stop file (it still ran when the noisy victim run ended)."""
    text = read_text(os.path.join(stagedir, AGGRESSOR_OUT))
    records, summary = parse_output(text)
    err = os.path.join(stagedir, AGGRESSOR_ERR)
    if summary is None:
        reason = not_finished_reason(err)
        raise SanityError(f"the aggressor did not finish: {reason}")
    if not summary.get("ok"):
        raise SanityError(f"the aggressor failed: {summary.get('error') or payload_error(err)}")
    if not records or not records[-1].get("validated"):
        raise SanityError("the aggressor's data was not validated")
    rec = records[-1]
    if rec.get("ended") != "stop-file":
        raise SanityError(f"the aggressor ended ({rec.get('ended')}, after {rec.get('elapsed_s', 0):.1f} s) "
                          "before the noisy victim run did: its numbers are partly quiet; raise "
                          "-S aggressor_duration")
    return rec


@sn.deferrable
def noise_ok(stdout, stderr, stagedir, sizes):
    """True if both victim runs and the aggressor did what they should; else a SanityError with
    the reason (the aggressor's own too where a victim run is missing because of it)."""
    try:
        victim_runs(stdout, stderr, sizes)
    except SanityError as exc:
        try:
            aggressor_run(stagedir)
        except SanityError as why:
            raise SanityError(f"{exc}; {why}") from None
        raise
    aggressor_run(stagedir)
    return True


@sn.deferrable
def noise_value(stdout, stderr, stagedir, size, what):
    """One perf value of a noise run: 'quiet_time', 'noisy_time' (median, us), 'slowdown'
    (noisy / quiet median), 'spread' / 'quiet_spread' ((p95 - p05) / median), 'aggressor'."""
    if what == "aggressor":
        return aggressor_run(stagedir)["goodput_GBps"]
    quiet, noisy = victim_runs(stdout, stderr, [size])
    q, n = quiet[size], noisy[size]
    if what == "quiet_time":
        return record_value(q, "latency")
    if what == "noisy_time":
        return record_value(n, "latency")
    if what == "slowdown":
        return n["time_us"]["median"] / q["time_us"]["median"]
    rec = n if what == "spread" else q
    t = rec["time_us"]
    return (t["p95"] - t["p05"]) / t["median"]


class NoiseBase(GpucommCheck):
    """A victim (pingpong or allreduce, with ``method``) quiet and under an aggressor, in one
    ``layout``.  Leaves give ``victim``, ``method`` and ``layout``.

    ``victim`` is the leaf's parameter under the name users give it (``-n
    NoiseCheck%victim=pingpong``; the references index by it): the victim's payload operation.
    requirements() copies it into GpucommCheck's ``op``, and everything after reads ``op``, as
    in every other check; "victim" elsewhere names the role (the victim's nodes, ranks, step)."""

    #: the two victim sizes are the study's, quiet and noisy alike: never a sweep cut short
    fits_memory = False
    #: opt-in: the check loads the network, so it is skipped unless this is set (the noise
    #: mode sets it; never in the default, health, acceptance or paper runs)
    load_fabric = variable(bool, value=False)
    #: the victim's small (latency) and large (bandwidth) size, the payload's syntax
    small_size = variable(str, value="8")
    large_size = variable(str, value="16M")
    #: the aggressor's method ('': the victim's), pattern (streams, alltoall), message size
    aggressor_method = variable(str, value="")
    aggressor_pattern = variable(str, value="streams")
    aggressor_size = variable(str, value="16M")
    #: GB/s per aggressor rank (0: as fast as possible)
    aggressor_bandwidth = variable(float, value=0.0)
    #: aggressor nodes (0: the partition's extras['noise']['aggressor_nodes'], else 2) and ranks
    #: per node (0: every GPU of a node, 2 on a node without GPUs)
    aggressor_nodes = variable(int, value=0)
    aggressor_ranks_per_node = variable(int, value=0)
    #: the aggressor's longest run, s (0: 80 % of the time limit); the stop file ends it as soon
    #: as the noisy victim run is over
    aggressor_duration = variable(float, value=0.0)
    #: seconds the job waits for the aggressor's load to be on, and how often it starts the
    #: aggressor again (killing the one that did not get ready) before it gives up
    ready_timeout = variable(int, value=120)
    aggressor_starts = variable(int, value=2)
    #: whom -S service_level applies to: victim, aggressor or both (the paper's comparison:
    #: default SL against a dedicated one for the victim)
    service_level_to = variable(str, value="both")
    #: explicit node lists (Slurm syntax) for the victim's 2 nodes and the aggressor's; both or
    #: neither; they replace the partition's layout
    victim_nodelist = variable(str, value="")
    aggressor_nodelist = variable(str, value="")
    time_limit = "10m"

    # ------------------------------------------------------------------ init

    def requirements(self):
        self.op = self.victim  # the one read of the parameter: see the class docstring
        self.skip_if(not self.load_fabric, "the noise check loads the network: opt in with "
                     "--mode noise (or -S load_fabric=y)")
        return super().requirements()

    def description(self):
        return (f"{self.op} with {self.method}, quiet and under an aggressor, "
                f"layout {self.layout}")

    def more_tags(self):
        return {self.op, self.method, "noise"}

    # ------------------------------------------------------------------ setup

    @property
    def victim_sizes(self):
        return [parse_size(self.small_size), parse_size(self.large_size)]

    @property
    def aggressor_method_name(self):
        return self.aggressor_method or self.method

    def noise_extras(self):
        return self.current_partition.extras.get(Extras.NOISE, {})

    def check_variables(self):
        for name in ("small_size", "large_size", "aggressor_size"):
            try:
                parse_size(getattr(self, name))
            except GpucommError as exc:
                raise ReframeError(f"-S {name}={getattr(self, name)}: {exc}") from None
        self.sizes = ",".join(map(str, self.victim_sizes))
        if self.op not in VICTIM_OPS:
            raise ReframeError(f"victim {self.op}: choose {', '.join(VICTIM_OPS)}")
        if self.layout not in NOISE_LAYOUTS:
            raise ReframeError(f"-S layout={self.layout}: choose {', '.join(NOISE_LAYOUTS)}")
        if self.aggressor_method not in ("",) + METHODS:
            raise ReframeError(f"-S aggressor_method={self.aggressor_method}: choose "
                               f"{', '.join(METHODS)} (or '' for the victim's)")
        if self.aggressor_pattern not in PATTERNS:
            raise ReframeError(f"-S aggressor_pattern={self.aggressor_pattern}: choose "
                               f"{', '.join(PATTERNS)}")
        if self.service_level_to not in SERVICE_LEVEL_TARGETS:
            raise ReframeError(f"-S service_level_to={self.service_level_to}: choose "
                               f"{', '.join(SERVICE_LEVEL_TARGETS)}")
        for name in ("aggressor_bandwidth", "aggressor_nodes", "aggressor_ranks_per_node",
                     "aggressor_duration", "ready_timeout"):
            if not getattr(self, name) >= 0:
                raise ReframeError(f"-S {name}={getattr(self, name)}: must be >= 0")
        if bool(self.victim_nodelist) != bool(self.aggressor_nodelist):
            raise ReframeError("-S victim_nodelist and -S aggressor_nodelist: give both or neither")
        super().check_variables()

    def set_tasks(self):
        gpus = self.gpus_per_node()
        self.aggr_nodes = self.aggressor_nodes or int(self.noise_extras().get("aggressor_nodes", 2))
        if self.aggressor_pattern == "streams" and self.aggr_nodes % 2:
            raise ReframeError(f"the aggressor's streams pair its nodes: {self.aggr_nodes} aggressor "
                               "nodes is odd (-S aggressor_pattern=alltoall, or an even count)")
        self.victim_ppn = self.ranks_per_node or (1 if self.op == PINGPONG else (gpus or 1))
        self.aggressor_ppn = self.aggressor_ranks_per_node or (gpus or 2)
        self.num_nodes = VICTIM_NODES + self.aggr_nodes
        per_node = max(self.victim_ppn, self.aggressor_ppn)
        if self.emulated:
            self.num_tasks = VICTIM_NODES * self.victim_ppn + self.aggr_nodes * self.aggressor_ppn
            self.num_tasks_per_node = self.num_tasks
        else:
            self.num_tasks = per_node * self.num_nodes
            self.num_tasks_per_node = per_node
        self.ranks_per_emulated_node = self.victim_ppn if self.emulated else 0

    def layout_entry(self):
        """{job, victim, aggressor} of this layout: the -S node lists, else the partition's
        entry, else None."""
        if self.victim_nodelist:
            return {"job": [f"--nodelist={self.victim_nodelist},{self.aggressor_nodelist}"],
                    "victim": self.victim_nodelist, "aggressor": self.aggressor_nodelist}
        return self.noise_extras().get("layouts", {}).get(self.layout)

    def skip_reason(self):
        reason = self.node_count_reason()
        if reason:
            return reason
        if self.multi_node and self.layout_entry() is None:
            return (f"{self.current_partition.fullname} has no noise layout {self.layout} "
                    "(extras['noise']['layouts']): give the nodes with -S victim_nodelist=... "
                    "-S aggressor_nodelist=...")
        if self.multi_node and not isinstance(self.job.launcher, SrunLauncher):
            return "the noise check places its job steps with srun (--nodelist, --relative)"
        for method, op, ppn in ((self.method, self.op, self.victim_ppn),
                                (self.aggressor_method_name, AGGRESSOR, self.aggressor_ppn)):
            why = unavailable(method, op, self.current_partition, self.current_environ, ppn,
                              self.multi_node)
            if why:
                return why
        return None

    def request_gpus(self):
        if any(m != HOST for m in self.run_methods()):
            self.num_gpus_per_node = self.num_tasks_per_node

    def run_methods(self):
        return list(dict.fromkeys([self.method, self.aggressor_method_name]))

    def scheduler_options(self):
        entry = self.layout_entry() if self.multi_node else None
        return list((entry or {}).get("job", [])) + super().scheduler_options()

    def effective_service_level(self):
        """None for the whole job: the service level goes to the steps service_level_to names
        (step_env)."""
        return None

    def step_env(self, role):
        """{VAR: level} of the service level for ``role`` (victim, aggressor), or {}."""
        level = super().effective_service_level()
        if level is None or self.service_level_to not in (role, "both"):
            return {}
        return {v: str(level) for v in self.current_partition.extras.get(Extras.SERVICE_LEVEL_VARS, [])}

    def time_limit_s(self):
        return float(self.time_limit or 600)

    def command(self):
        """The victim's payload command; the launches are built in noise_script."""
        exe, opts = super().command()
        i = opts.index("--timeout") + 1 if "--timeout" in opts else None
        if i:  # two victim runs share the time limit with the aggressor's start
            opts[i] = f"{max(30.0, 0.35 * self.time_limit_s()):g}"
        return exe, opts

    def aggressor_command(self):
        duration = self.aggressor_duration or 0.8 * self.time_limit_s()
        opts = ["-m", "gpucomm", AGGRESSOR, "--method", self.aggressor_method_name,
                "--sizes", self.aggressor_size, "--pattern", self.aggressor_pattern,
                "--duration", f"{duration:g}", "--ready-file", READY_FILE, "--stop-file", STOP_FILE,
                "--json", AGGRESSOR_JSON, "--quiet",
                "--timeout", f"{max(30.0, 0.9 * self.time_limit_s()):g}"]
        if self.aggressor_bandwidth > 0:
            opts += ["--target-bandwidth", f"{self.aggressor_bandwidth:g}"]
        if self.emulated:
            opts += ["--ranks-per-node", str(self.aggressor_ppn)]
        extras = self.current_partition.extras  # one rank's sends: its node's network, or a link
        limit = extras.get(Extras.NETWORK_BANDWIDTH if self.multi_node else Extras.LINK_BANDWIDTH)
        if limit and self.aggressor_method_name != HOST:
            opts += ["--max-bandwidth", f"{limit:g}"]
        return [self.interpreter()] + opts

    def step_launch(self, launcher, role):
        """The launcher words of one job step: ``role``'s ranks on ``role``'s nodes."""
        nodes, ppn = ((VICTIM_NODES, self.victim_ppn) if role == "victim"
                      else (self.aggr_nodes, self.aggressor_ppn))
        job = self.job
        saved = job.num_tasks, job.num_tasks_per_node
        job.num_tasks = (nodes * ppn) if (self.emulated or self.multi_node) else self.num_tasks
        job.num_tasks_per_node = ppn
        try:
            words = list(launcher.command(job))
        finally:
            job.num_tasks, job.num_tasks_per_node = saved
        if isinstance(launcher, SrunLauncher):
            words += [f"--nodes={nodes}", f"--ntasks={nodes * ppn}", f"--ntasks-per-node={ppn}"]
            entry = self.layout_entry() or {}
            if entry.get(role):
                words.append(f"--nodelist={entry[role]}")
            else:
                words.append(f"--relative={0 if role == 'victim' else VICTIM_NODES}")
        env = dict(self.noise_extras().get("aggressor_env", {})) if role == "aggressor" else {}
        env.update(self.step_env(role))
        return [f"{k}={v}" for k, v in env.items()] + words + list(launcher.options)

    @run_before("run")
    def noise_script(self):
        """The job script's steps (see the module's docstring): every launch written here, the
        noisy victim run as the job's own command (ReFrame's local launcher: no prefix)."""
        launcher = self.job.launcher
        victim = " ".join(self.step_launch(launcher, "victim") + [self.executable])
        quiet = list(self.executable_opts)
        noisy = list(self.executable_opts)
        quiet[quiet.index("--json") + 1] = QUIET_JSON
        noisy[noisy.index("--json") + 1] = NOISY_JSON
        aggressor = " ".join(self.step_launch(launcher, "aggressor") + self.aggressor_command())
        start = (f"gpucomm_start() {{ {aggressor} >{AGGRESSOR_OUT} 2>{AGGRESSOR_ERR} & "
                 "gpucomm_aggressor=$!; }")
        up = ["gpucomm_aggressor_up", READY_FILE, AGGRESSOR_ERR, str(self.ready_timeout),
              str(max(1, self.aggressor_starts)), ERROR_PREFIX]
        self.prerun_cmds += [
            f"rm -f {READY_FILE} {STOP_FILE}",
            " ".join([victim] + quiet),
            start,
            aggressor_fragment(),
            shlex.join(up),
        ]
        self.postrun_cmds = [f"touch {STOP_FILE}", "wait $gpucomm_aggressor"] + list(self.postrun_cmds)
        self.executable, self.executable_opts = victim, noisy
        self.job.launcher = getlauncher("local")()
        self.keep_files += [QUIET_JSON, NOISY_JSON, AGGRESSOR_JSON, AGGRESSOR_OUT, AGGRESSOR_ERR]

    # ------------------------------------------------------------------ sanity, performance

    def sanity_ok(self):
        steps = []
        if self.preflight:
            steps.append(preflight_ok(str(self.stdout), str(self.stderr), self.recipe()))
        if self.multi_node:  # a victim in the wrong place is the reason, whatever else failed
            steps.append(victim_layout_ok(os.path.join(self.stagedir, QUIET_JSON), self.layout,
                                          self.current_partition.extras.get(Extras.TOPOLOGY)))
        steps.append(noise_ok(str(self.stdout), str(self.stderr), self.stagedir, self.victim_sizes))
        if self.multi_node:
            steps.append(layout_ok(os.path.join(self.stagedir, QUIET_JSON),
                                   os.path.join(self.stagedir, AGGRESSOR_JSON), self.layout,
                                   self.current_partition.extras.get(Extras.TOPOLOGY)))
        return sn.all(steps)

    def perf_functions(self):
        out, err, stage = str(self.stdout), str(self.stderr), self.stagedir
        perf = {}
        for size in self.victim_sizes:
            label = size_label(size)
            for name, what, unit in ((f"quiet_time_{label}", "quiet_time", "us"),
                                     (f"noisy_time_{label}", "noisy_time", "us"),
                                     (f"victim_slowdown_{label}", "slowdown", "x"),
                                     (f"victim_spread_{label}", "spread", "x"),
                                     (f"quiet_spread_{label}", "quiet_spread", "x")):
                perf[name] = sn.make_performance_function(noise_value(out, err, stage, size, what), unit)
        perf["aggressor_GBps"] = sn.make_performance_function(
            noise_value(out, err, stage, 0, "aggressor"), "GB/s")
        return perf
