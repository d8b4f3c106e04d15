"""ReFrame base of the pair-matrix check (checks/pairmatrix.py): per-pair perf variables and
per-pair references from the partition's pair classes.

Perf variables, for each swept size of ``perf_sizes`` (label L, e.g. 256MiB) and each pair:

* ``uni_L_i-j``: ping-pong goodput i -> j, one pair at a time (every ordered pair);
* ``bidir_L_i-j`` (i < j): bidirectional goodput of the pair, both directions (2 S / t);
* ``conc_uni_L_i-j`` / ``conc_bidir_L_i-j``: the pair's goodput while all disjoint pairs run
  (its concurrent round); ``min_pair_uni_L`` / ``min_pair_bidir_L``: the slowest single pair;
* ``latency_8B_i-j``: ping-pong latency i -> j (us), where 8 B is swept.

No variable copies another (each would weigh twice in a verdict, whose tolerances grow with the
number of variables judged): a pair alone in its round (2 or 3 ranks: every round holds one pair)
runs the same case as its single one (i -> j, and i <> j), so its ``conc_*`` variables are left
out where the single pairs run; and a matrix of one pair (2 ranks) has no ``min_pair_*``, whose
value is one of its pair's variables under the same reference.

With ``pair_scope=rounds`` (the default of a node pair matrix, below) the payload runs the
concurrent rounds only (``--pairs rounds``: every pair once, n-1 rounds), and the variables are
the rounds': ``conc_uni_L_i-j``, ``conc_bidir_L_i-j``, ``conc_latency_8B_i-j`` (the pair's half
round trip while its round runs, us) and ``min_pair_conc_uni_L`` / ``min_pair_conc_bidir_L``
(more than one pair only).

A node pair matrix's rounds (``pair_scope`` rounds across nodes) report per node instead of per
pair (node_plan: ``BASE_slowest_NODE`` and ``BASE_median_NODE``), every pair in the loggable
``pair_values`` (contract.PAIRS_FIELD) that the verdict reads; its time limit is computed
(pairs.time_limit_s), and with ``group_size`` it is one job of the groups' schedule (pairs.group_jobs).

A pair whose GPUs have no peer access (the payload's p2p probe) gets the suffix ``_nop2p``, so
that a failure names the reason with the pair.

Across nodes (``-S num_nodes=N -S ranks_per_node=1``: one rank on each of N real nodes, every
pair a pair of nodes), a pair is named by its nodes instead of its ranks (``uni_L_gcn4-gcn1``,
the hosts of the run's results), so that a slow link fails as its node pair, whichever rank
Slurm gave each node; and its class is the switch distance of its two nodes (same-switch,
different-switch, different-group: gpucomm.pairs.switch_distance of their SLURM_TOPOLOGY_ADDR),
where Slurm reports the topology, else extras['pair_classes'] by rank as on one node.  ReFrame
reports every perf variable below its reference, hence every slow pair, in one failure message.

References: ``PairMatrixCheck`` in config/references/<system>.yaml, per partition, method and
pair class (extras['pair_classes'], gpucomm.pairs.pair_class; one class 'all' without it),
under the base name of each variable (``uni_256MiB``, ``bidir_256MiB``, ``conc_uni_256MiB``,
``latency_8B``); ``min_pair_*`` takes the lowest class's.  Read here, not by ReFrame's ``$ref``
(its index cannot go below the test's own variables to a pair).
"""

import os
import statistics

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import ReframeError, SanityError
from reframe.utility import nodelist_abbrev, nodelist_expand

from ..constants import HOST, PAIR_MATRIX, PAIR_SCOPES, PAIRS_ALL, PAIRS_ROUNDS, PRECISION_CAP_S, Extras
from ..contract import LATENCY, parse_output, record_value
from ..errors import GpucommError
from ..pairs import group_jobs, job_rounds, pair_class, pair_label, switch_distance, time_limit_s, tournament
from ..sizes import parse_sizes, size_label
from . import setvars
from .base import GpucommCheck, read_references
from .sanity import payload_ok, read_meta

LATENCY_SIZE = 8
#: a node pair's link where the partition says nothing of it (the time limit's model): latency ...
PAIR_LATENCY_US = 50.0
#: ... and one direction's bandwidth, GB/s (a partition's: its network_bandwidth_GBps over its NICs)
PAIR_GBPS = 1.0
#: the per-node statistics of a node pair matrix's pairs (perf variables NAME_slowest_NODE, NAME_median_NODE)
NODE_STATS = ("slowest", "median")

def case_count(n, nsizes, pairs=PAIRS_ALL, split=0):
    """Records the payload writes for n ranks: per size, n(n-1) ping-pongs and n(n-1)/2
    bidirectional pairs (``pairs`` all only), and the concurrent rounds of both modes (with
    ``split``, the rounds between ranks [0, split) and [split, n): pairs.job_rounds)."""
    singles = n * (n - 1) + n * (n - 1) // 2 if pairs == PAIRS_ALL else 0
    return nsizes * (singles + 2 * len(job_rounds(n, split)))

def read_pair_records(path):
    with open(path) as fp:
        return parse_output(fp.read())[0]

_PAIRS_CACHE: dict = {}


def round_pairs(path):
    """{(size, mode): {(i, j): (time_us, goodput_GBps)}} of every concurrent round's pairs of a
    job's output, read once per version of the file (a node pair matrix of 1024 nodes: 3 million
    pairs, read by every per-node perf variable)."""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _PAIRS_CACHE:
        out: dict = {}
        for rec in read_pair_records(path):
            if rec.get("scope") == "concurrent":
                into = out.setdefault((rec["size"], rec["mode"]), {})
                for p in rec["pair_results"]:
                    into[tuple(sorted(p["pair"]))] = (p["time_us"], p["goodput_GBps"])
        _PAIRS_CACHE.clear()
        _PAIRS_CACHE[key] = out
    return _PAIRS_CACHE[key]


def node_pair_stats(path, size, mode, key):
    """{rank: (slowest, median)} of each rank's pairs at ``size`` in ``mode``: goodput (the
    lowest is the slowest) or 'latency' (us, the highest)."""
    per: dict = {}
    for (i, j), (t, g) in round_pairs(path).get((size, mode), {}).items():
        value = t if key == LATENCY else g
        per.setdefault(i, []).append(value)
        per.setdefault(j, []).append(value)
    worst = max if key == LATENCY else min
    return {r: (worst(v), statistics.median(v)) for r, v in per.items()}


@sn.deferrable
def node_value(stdout, size, mode, key, rank, stat):
    """A rank's (node's) slowest or median pair (NODE_STATS) of a node pair matrix."""
    found = node_pair_stats(stdout, size, mode, key).get(rank)
    if found is None:
        raise SanityError(f"no {mode} pair of rank {rank} at {size} B")
    return found[NODE_STATS.index(stat)]


@sn.deferrable
def every_case_ok(stdout, nranks, nsizes, pairs=PAIRS_ALL, split=0):
    """True if the payload wrote one validated record per case; else a SanityError."""
    records = read_pair_records(stdout)
    want = case_count(nranks, nsizes, pairs, split)
    bad = [r for r in records if not r.get("validated")]
    if bad or len(records) != want:
        raise SanityError(f"pair matrix incomplete: {len(records) - len(bad)} of {want} cases validated")
    return True

@sn.deferrable
def pair_value(stdout, size, mode, scope, pair, key):
    """One pair's number: goodput (GB/s) or 'latency' (median half round trip, us)."""
    for rec in read_pair_records(stdout):
        if rec["size"] != size or rec["mode"] != mode or rec["scope"] != scope:
            continue
        if scope == "single" and rec["pair"] == pair:
            return record_value(rec, LATENCY if key == LATENCY else "goodput_GBps")
        if scope == "concurrent":
            for p in rec["pair_results"]:
                if sorted(p["pair"]) == pair:
                    return p["time_us"] if key == LATENCY else p["goodput_GBps"]
    raise SanityError(f"no {mode} {scope} record of pair {pair_label(pair)} at {size} B")

@sn.deferrable
def min_pair_value(stdout, size, mode, scope="single"):
    """The slowest pair's goodput: of the single cases, or of every concurrent round's pairs."""
    records = [rec for rec in read_pair_records(stdout)
               if rec["size"] == size and rec["mode"] == mode and rec["scope"] == scope]
    if scope == "single":
        return min(rec["goodput_GBps"] for rec in records)
    return min(p["goodput_GBps"] for rec in records for p in rec["pair_results"])

def alone_in_round(n):
    """The pairs of ``n`` ranks that run alone in their concurrent round (every pair for 2 or 3
    ranks): such a round is the pair's single case again (i -> j and i <> j, the others idle)."""
    return [r[0] for r in tournament(n) if len(r) == 1]

class PairMatrixBase(GpucommCheck):
    """Every GPU of the node, every pair (see the module's docstring)."""

    op = PAIR_MATRIX
    all_gpus = True
    sizes = "8,1M,256M"
    #: sizes with goodput perf variables where swept (the default sweep's and the health
    #: mode's largest)
    perf_sizes = variable(str, value="256M,1G")
    #: which pairs run (the payload's --pairs): 'all' (every pair one at a time, then the
    #: concurrent rounds), 'rounds' (the rounds only: n-1 for n ranks), or 'auto': rounds for a
    #: node pair matrix (1024 nodes: 1023 rounds instead of a million single pairs), all on one node
    pair_scope = variable(str, value="auto")
    #: a node pair matrix in groups of at most this many nodes (0: one job of every node): the
    #: batch (-S nodelist=...) cut by pairs.group_jobs into one job per group and one per pair of
    #: groups; ``group_job`` says which job this test case is (-P PairMatrixCheck.group_job:0,...)
    group_size = variable(setvars.integer("group_size"), value=0)
    #: this test case's job of the groups' schedule (pairs.group_jobs; -1: none)
    group_job = variable(setvars.integer("group_job"), value=-1)
    #: a node pair's link for the time limit's model (pairs.time_limit_s): latency (us) and one
    #: direction's bandwidth (GB/s); 0: the partition's network over its NICs, else PAIR_LATENCY_US, PAIR_GBPS
    pair_latency_us = variable(setvars.real("pair_latency_us"), value=0.0)
    pair_GBps = variable(setvars.real("pair_GBps"), value=0.0)
    #: a node pair matrix's every pair (contract.PAIRS_FIELD): {"nodes": [host by rank],
    #: "values": {base name: {"unit": unit, "pairs": [[rank, rank, value], ...]}}}; loggable, so
    #: that the session report holds every pair for the verdict (gpucomm acceptance)
    pair_values = variable(dict, value={}, loggable=True)  # contract.PAIRS_FIELD
    #: the first group's size in this job (the payload's --between; 0: every pair of its nodes)
    split = 0
    #: the jobs of the groups' schedule (group_size)
    jobs_total = 0

    @run_after("init")
    def nodes_of_the_list(self):
        """A node list given without its count (-S PairMatrixCheck.nodelist=nid[001-004], num_nodes
        left at 1) is the matrix of those nodes: num_nodes is its length, before ReFrame's
        --filter-expr (acceptance-network's num_nodes > 1) reads it; a list was never to be ignored.
        With ``group_size`` the list is the batch: num_nodes its largest job's until
        nodes_of_the_job (ReFrame selects before -P sets group_job)."""
        if not self.nodelist or self.emulate_nodes:
            return
        nodes = nodelist_expand(self.nodelist)
        if self.group_size > 0:
            jobs = group_jobs(len(nodes), self.group_size)
            self.jobs_total = len(jobs)
            self.num_nodes = max(len(job[1]) for job in jobs)
        elif self.num_nodes == 1:
            self.num_nodes = len(nodes)

    @run_before("setup")
    def nodes_of_the_job(self):
        """With ``group_size``: this test case's job of the groups' schedule (pairs.group_jobs,
        ``group_job``): its nodes (the batch's in its order) and the first group's size."""
        if self.group_size <= 0 or not self.nodelist or not 0 <= self.group_job < self.jobs_total:
            return  # check_variables says what is wrong
        nodes = nodelist_expand(self.nodelist)
        _, mine, self.split = group_jobs(len(nodes), self.group_size)[self.group_job]
        self.nodelist = nodelist_abbrev([nodes[i] for i in mine])
        self.num_nodes = len(mine)

    def group_problem(self):
        """What is wrong with group_size and group_job (one line), or ''."""
        if self.group_size <= 0:
            return "" if self.group_job < 0 else "-P PairMatrixCheck.group_job:... needs -S group_size=G"
        if not self.nodelist:
            return f"-S group_size={self.group_size}: the batch is -S PairMatrixCheck.nodelist=..."
        if not 0 <= self.group_job < self.jobs_total:
            return (f"-S group_size={self.group_size}: each test case is one job of the groups' schedule "
                    f"(pairs.group_jobs): -P PairMatrixCheck.group_job:0,...,{self.jobs_total - 1} "
                    f"({self.jobs_total} jobs), not {self.group_job}")
        return ""

    def pairs_run(self):
        """'all' or 'rounds' (see ``pair_scope``)."""
        if self.pair_scope != "auto":
            return self.pair_scope
        return PAIRS_ROUNDS if self.node_pairs else PAIRS_ALL

    @property
    def node_pairs(self):
        """Whether the pairs are pairs of nodes: one rank on each of num_nodes real nodes."""
        return self.multi_node and self.ranks_per_node == 1

    def skip_reason(self):
        if self.num_nodes != 1 and not self.node_pairs:
            return (f"{self.op} is the pairs of one node, or of nodes with one rank each "
                    f"(-S ranks_per_node=1 on real nodes), not {self.num_nodes} nodes with "
                    f"{self.ranks_per_node or 'every GPU or 2'} rank(s) each"
                    + (" emulated" if self.emulated else ""))
        if self.method == HOST and self.gpus_per_node() > 0:
            # host buffers between CPU processes say nothing of a GPU node's pairs (and cost
            # 12 s of the health mode's minute on the reference node): the GPU methods run
            return (f"{self.op} of host buffers is for nodes without GPUs; "
                    f"{self.current_partition.fullname} has GPUs: the GPU methods test its pairs")
        return super().skip_reason()

    def check_variables(self):
        super().check_variables()
        if self.ranks_per_node == 1 and self.num_nodes == 1:
            raise ReframeError("-S ranks_per_node=1: a pair matrix needs at least 2 ranks "
                               "(one node: 2 or more; several nodes: 1 each, -S num_nodes=N)")
        self.perf_size_list()
        if self.pair_scope not in ("auto", *PAIR_SCOPES):
            raise ReframeError(f"-S pair_scope={self.pair_scope}: one of auto, {', '.join(PAIR_SCOPES)}")
        problem = self.group_problem()
        if problem:
            raise ReframeError(problem)

    def command(self):
        exe, opts = super().command()
        between = ["--between", str(self.split)] if self.split else []
        return exe, opts + ["--pairs", self.pairs_run()] + between

    def set_tasks(self):
        super().set_tasks()
        if self.node_pairs and not any(var == "time_limit" and test in (None, type(self).__name__)
                                       for test, var in setvars.command_line_names()):
            self.time_limit = f"{self.model_time_limit_s()}s"

    def link_figures(self):
        """(latency in s, one direction's GB/s) of a node pair for the time limit: -S pair_latency_us
        and pair_GBps, else the partition's network_bandwidth_GBps over its NICs, else PAIR_GBPS."""
        extras = self.current_partition.extras
        nics = len((extras.get(Extras.NICS) or {}).get("devices") or ()) or 1
        network = extras.get(Extras.NETWORK_BANDWIDTH)
        bandwidth = self.pair_GBps or (network / nics if network else PAIR_GBPS)
        return (self.pair_latency_us or PAIR_LATENCY_US) * 1e-6, bandwidth

    def model_time_limit_s(self):
        """The job's time limit (whole minutes, in s) from its rounds, sizes, iterations, budget,
        soak and precision cap over the link_figures (pairs.time_limit_s)."""
        rounds = len(job_rounds(self.num_tasks, self.split)) if self.pairs_run() == PAIRS_ROUNDS else \
            len(tournament(self.num_tasks)) + self.num_tasks * (self.num_tasks - 1)
        target_on = self.precision_target > 0 or (self.precision_target < 0 and not self.iters)
        return time_limit_s(rounds, self.num_nodes, self.size_list, *self.link_figures(), iters=self.iters,
                            warmup=self.warmup, budget=self.budget, soak=self.validate_every > 0,
                            precision_cap=(self.budget or PRECISION_CAP_S) if target_on else 0.0)

    def perf_size_list(self):
        try:
            return parse_sizes(self.perf_sizes)
        except GpucommError as exc:
            raise ReframeError(f"-S perf_sizes={self.perf_sizes}: {exc}") from None

    def run_nodes(self):
        """(host of every rank, {host: SLURM_TOPOLOGY_ADDR or None}) of a finished node pair
        matrix, from its results' meta; ([], {}) for the pairs of one node or before the run."""
        if not self.node_pairs:
            return [], {}
        meta = read_meta(self.results_path())
        placement = meta.get("placement", {})
        hosts = list(meta.get("hosts", []))
        if len(hosts) != self.num_tasks or len(set(hosts)) != len(hosts):
            return [], {}
        return hosts, dict(zip(placement.get("hosts", []), placement.get("topology_addr", [])))

    def pair_name(self, pair, hosts=()):
        """A pair's label: its nodes' names where ``hosts`` (by rank) is given, else 'i-j'."""
        return "-".join(hosts[r] for r in pair) if hosts else pair_label(pair)

    def class_of(self, pair, nodes=([], {})):
        """The reference class of a rank pair: its nodes' switch distance where Slurm told both
        nodes' places (``nodes``: run_nodes()), else extras['pair_classes']."""
        hosts, addrs = nodes
        if hosts:
            a, b = (addrs.get(hosts[r]) for r in pair)
            if a and b:
                return switch_distance(a, b)
        return pair_class(self.current_partition.extras.get(Extras.PAIR_CLASSES), *pair)

    def perf_plan(self, p2p=None, hosts=()):
        """[(name, base name for the reference, deferred value, unit)]: what set_perf_variables
        and set_references share; ``p2p`` ({'i-j': bool}) marks the pairs without peer access,
        ``hosts`` (by rank, a node pair matrix's) names the pairs by their nodes."""
        if self.node_pairs and self.pairs_run() == PAIRS_ROUNDS:
            return self.node_plan(hosts)
        n, swept = self.num_tasks, set(self.measured_sizes())
        out: list[tuple] = []
        ordered = [[i, j] for i in range(n) for j in range(n) if i != j]
        unordered = [p for p in ordered if p[0] < p[1]]
        singles = self.pairs_run() == PAIRS_ALL
        concurrent = [p for p in unordered if not singles or p not in alone_in_round(n)]
        stdout = str(self.stdout)

        def name(base, pair):
            flag = "_nop2p" if (p2p or {}).get(pair_label(pair)) is False else ""
            return f"{base}_{self.pair_name(pair, hosts)}{flag}"

        if LATENCY_SIZE in swept:
            scope, base = ("single", "latency_8B") if singles else ("concurrent", "conc_latency_8B")
            for p in ordered if singles else unordered:
                out.append((name(base, p), base, p,
                            pair_value(stdout, LATENCY_SIZE, "uni", scope, p, LATENCY), "us"))
        for size in sorted(swept & set(self.perf_size_list())):
            label = size_label(size)
            for mode, pairs in (("uni", ordered), ("bidir", unordered)):
                base = f"{mode}_{label}"
                for p in pairs if singles else ():
                    out.append((name(base, p), base, p,
                                pair_value(stdout, size, mode, "single", p, "goodput"), "GB/s"))
                for p in concurrent:
                    out.append((name(f"conc_{base}", p), f"conc_{base}", p,
                                pair_value(stdout, size, mode, "concurrent", p, "goodput"), "GB/s"))
                if len(unordered) < 2:
                    continue  # one pair: its own variables say it all
                if singles:
                    out.append((f"min_pair_{base}", base, None, min_pair_value(stdout, size, mode), "GB/s"))
                else:
                    out.append((f"min_pair_conc_{base}", f"conc_{base}", None,
                                min_pair_value(stdout, size, mode, "concurrent"), "GB/s"))
        return out

    def node_bases(self):
        """[(base name, size, mode, record key, unit)] of a node pair matrix's rounds: the
        concurrent latency at 8 B where swept, each perf size's uni and bidir goodput."""
        swept = set(self.measured_sizes())
        out = [("conc_latency_8B", LATENCY_SIZE, "uni", LATENCY, "us")] if LATENCY_SIZE in swept else []
        for size in sorted(swept & set(self.perf_size_list())):
            out += [(f"conc_{mode}_{size_label(size)}", size, mode, "goodput", "GB/s") for mode in ("uni", "bidir")]
        return out

    def node_plan(self, hosts=()):
        """A node pair matrix's perf variables: per node (its name, else its rank) and base, its
        slowest and its median pair (``BASE_slowest_NODE``, ``BASE_median_NODE``, NODE_STATS)
        under the base's lowest class's reference; every pair is in ``pair_values``
        (set_pair_values), not a perf variable each (1024 nodes: 6,144 variables, not 1.5 million)."""
        stdout = str(self.stdout)
        return [(f"{base}_{stat}_{hosts[r] if hosts else r}", base, None,
                 node_value(stdout, size, mode, key, r, stat), unit)
                for base, size, mode, key, unit in self.node_bases()
                for r in range(self.num_tasks) for stat in NODE_STATS]

    @run_after("performance")
    def set_pair_values(self):
        """``pair_values`` of a finished node pair matrix: every pair's value per base, by rank,
        with the ranks' hosts (contract.PAIRS_FIELD); none where it has no output (a dry run)."""
        if not (self.node_pairs and self.pairs_run() == PAIRS_ROUNDS) or self.is_dry_run():
            return
        try:
            round_pairs(str(self.stdout))
        except OSError:
            return
        hosts = self.run_nodes()[0]
        values = {}
        for base, size, mode, key, unit in self.node_bases():
            pairs = round_pairs(str(self.stdout)).get((size, mode), {})
            values[base] = {"unit": unit, "pairs": [[i, j, t if key == LATENCY else g]
                                                    for (i, j), (t, g) in sorted(pairs.items())]}
        self.pair_values = {"nodes": list(hosts) or [str(r) for r in range(self.num_tasks)], "values": values}

    def p2p_flags(self):
        return read_meta(self.results_path()).get("p2p", {})

    def class_refs(self):
        """{pair class: {base name: [value, lower, upper, unit]}} for this partition and method."""
        path = self.reference_file()
        if not path:
            return {}
        entry = read_references(path).get(type(self).__name__, {})
        return entry.get(self.current_partition.fullname, {}).get(self.method, {})

    def missing_reference(self):
        """'' if the reference YAML has pair classes for this partition and method with a value
        for a variable this run has (a class's ``uni_256KiB`` says nothing of the rounds'
        ``conc_uni_256KiB``), else what is missing (the classes are read here, not through '$index')."""
        refs = self.class_refs()
        bases = {base for _, base, _, _, _ in self.perf_plan()}
        if any(bases & set(r) for r in refs.values()):
            return ""
        what = f" for --pairs {self.pairs_run()}" if refs else ""
        return (f"no reference for {type(self).__name__} {self.method} on "
                f"{self.current_partition.fullname}{what} yet")

    def set_references(self):
        self.reference = self.pair_references(self.perf_plan())

    def pair_references(self, plan, nodes=([], {})):
        refs = self.class_refs()
        table = {}
        for name, base, pair, _, _ in plan:
            if pair is None:  # min_pair_*: the lowest class's reference
                found = [r[base] for r in refs.values() if base in r]
                ref = min(found, key=lambda r: r[0]) if found else None
            else:
                ref = refs.get(self.class_of(pair, nodes), {}).get(base)
            if ref is not None:
                table[name] = tuple(ref)
        return {self.current_partition.fullname: table} if table else {}

    def sanity_ok(self):
        return sn.all(self.sanity_steps([
            payload_ok(str(self.stdout), str(self.stderr), self.measured_sizes()),
            every_case_ok(str(self.stdout), self.num_tasks, len(self.measured_sizes()), self.pairs_run(),
                          self.split)]))

    def perf_functions(self):
        nodes = self.run_nodes()
        plan = self.perf_plan(self.p2p_flags(), nodes[0])
        self.reference = self.pair_references(plan, nodes)
        return {name: sn.make_performance_function(value, unit) for name, _, _, value, unit in plan}
