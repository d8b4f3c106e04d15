"""Acceptance of a batch of nodes against the fleet: one ReFrame session in (the per-node checks
run with ``--distribute=all``, and the node pair matrix across the nodes), a drain list and a pass
list out.

    gpucomm acceptance SESSION [--out DIR] [--min-gap 0.10] [--max-z 3.5] [--variables REGEX]

SESSION: a ReFrame JSON run report (``--report-file``, config/results.py's per-session report),
or the uuid of a session in ReFrame's results storage.

Rule, per check and perf variable (one value per node): a node is an outlier when its value is
worse than the median of the other nodes (lower for a bandwidth, higher for a time in us) by at
least ``--min-gap`` of that median, and its robust z-score against them, 0.6745 |log value -
median| / MAD of the logarithms (Iglewicz and Hoaglin's modified z-score; MAD the median absolute
deviation), is above ``--max-z`` (or the MAD is 0).  Both must hold: the gap keeps a uniform fleet (tiny MAD) from flagging anything, the
z-score keeps a noisy variable from flagging its slowest node.  No reference is needed.
A node pair matrix across nodes (variables named by node pairs, ``uni_256KiB_gcn4-gcn1``) is
judged per node: each of its pairs against the pairs of the same class (switch distance) without
that node; a node is flagged where most of its pairs are outliers (a slow node's partner is slow
in one pair only).  A check that failed on a node (its references, its sanity) drains the node too.
Fewer than 3 nodes: the fleet cannot judge; the verdict rests on the checks' references alone.

Writes DIR/drain.csv (node, check, variable, value, fleet_median, reason) and DIR/pass.csv
(node, checks, variables), prints the ``scontrol update nodename=... state=drain reason=...``
lines for a person to run (never runs them), and exits with constants.EXIT_REPORT_FAIL (6) when
any node is to be drained, EXIT_BAD_INPUT (2) for an unreadable session (one line).
"""

import argparse
import csv
import json
import math
import os
import re
import statistics
import sys
from collections import defaultdict

from ..constants import EXIT_BAD_INPUT, EXIT_OK, EXIT_REPORT_FAIL
from ..contract import ERROR_PREFIX, RESULTS_FILE
from ..pairs import switch_distance

MIN_GAP = 0.10       # of the fleet median: a uniform fleet flags nothing
MAX_Z = 3.5          # modified z-score (Iglewicz and Hoaglin): the usual outlier bound
MIN_NODES = 3        # fewer: no fleet to judge against
Z_SCALE = 0.6745     # MAD -> standard deviation of a normal distribution (1 / 1.4826)
DRAIN_FIELDS = ("node", "check", "variable", "value", "fleet_median", "reason")
PASS_FIELDS = ("node", "checks", "variables")
_NID = re.compile(r"%\.nid=(\S+)")


class SessionError(Exception):
    """The session cannot be read (exit 2)."""


# -- reading the session -------------------------------------------------------------------------

def read_session(source):
    """The test cases of one session: a run report file, or a stored session's uuid (ReFrame's
    results storage, through gpucomm.analysis.report.inputs).  The last run of each test case
    counts (retries); every case keeps its ReFrame name (the same for every node) and its nodes."""
    if os.path.exists(source):
        try:
            with open(source, errors="replace") as fp:
                doc = json.load(fp)
        except (OSError, json.JSONDecodeError) as exc:
            raise SessionError(f"{source}: not a ReFrame run report ({exc})") from None
    else:
        from .report.inputs import stored_sessions
        found, problem = stored_sessions(source)
        if problem or not found:
            raise SessionError(f"{source}: no such file, nor a stored session in {_database()}"
                               + (f" ({problem})" if problem else ""))
        doc = found[0]
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list) or "session_info" not in doc:
        raise SessionError(f"{source}: not a ReFrame run report (no session_info and runs)")
    latest = {}
    for run in doc["runs"]:
        cases = run.get("testcases") if isinstance(run, dict) else None
        if cases is not None and not isinstance(cases, list):
            raise SessionError(f"{source}: not a ReFrame run report (testcases is {type(cases).__name__}, not a list)")
        for tc in cases or []:
            if isinstance(tc, dict) and isinstance(tc.get("name"), str):
                bad = _bad_field(tc)
                if bad:
                    raise SessionError(f"{source}: test case {tc['name']}: {bad}: not a ReFrame run report")
                key = (tc.get("system"), tc.get("partition"), tc.get("environ"),
                       tc.get("display_name") or tc["name"])
                latest[key] = tc
    if not latest:
        raise SessionError(f"{source}: a ReFrame session without test cases")
    return list(latest.values())


#: the test case fields read here, with the types ReFrame writes (None: absent)
_FIELD_TYPES = {"display_name": str, "perfvalues": dict, "job_nodelist": list, "result": str}


def _bad_field(tc):
    """The first field of a test case of another type than ReFrame writes, said, or None."""
    for name, kind in _FIELD_TYPES.items():
        value = tc.get(name)
        if value is not None and not isinstance(value, kind):
            return f"{name} is {type(value).__name__}, not {kind.__name__}"
    return None


def _database():
    """The results database a stored session was looked up in, as ReFrame chooses it."""
    if os.environ.get("RFM_SQLITE_DB_FILE"):
        return os.environ["RFM_SQLITE_DB_FILE"]
    if os.environ.get("RFM_CONFIG_FILES"):
        return f"the database of RFM_CONFIG_FILES={os.environ['RFM_CONFIG_FILES']}"
    return ("ReFrame's default database (RFM_CONFIG_FILES is unset: gpucomm's sessions are in the one of "
            "the checkout's config/settings.py; set RFM_CONFIG_FILES to it, or RFM_SQLITE_DB_FILE)")


def case_nodes(tc):
    """The nodes a test case ran on: the node ``--distribute`` pinned it to, else Slurm's node
    list (which ReFrame's squeue scheduler can miss for a short job: 'None')."""
    m = _NID.search(tc.get("display_name") or "")
    if m:
        return [m.group(1)]
    return [n for n in tc.get("job_nodelist") or [] if n and n != "None"]


def perf_values(tc):
    """[(variable, value, unit)] of a test case's measured perf variables."""
    out = []
    for key, val in (tc.get("perfvalues") or {}).items():
        if isinstance(val, (list, tuple)) and len(val) >= 5 and isinstance(val[0], (int, float)):
            out.append((key.rsplit(":", 1)[-1], float(val[0]), val[4]))
    return out


def check_name(tc):
    return f"{tc['name']} ({tc.get('system')}:{tc.get('partition')})"


def fleet_values(cases):
    """{(check, system:partition, variable): {node: value}} and {same: unit} of the single-node
    test cases (one value per node: the per-node checks of a distributed run)."""
    values, units = defaultdict(dict), {}
    for tc in cases:
        nodes = case_nodes(tc)
        if len(nodes) != 1 or tc.get("result") not in ("pass", "fail"):
            continue
        for var, value, unit in perf_values(tc):
            key = (tc["name"], f"{tc.get('system')}:{tc.get('partition')}", var)
            values[key][nodes[0]] = value
            units[key] = unit
    return values, units


# -- the fleet rule ------------------------------------------------------------------------------

def worse_by(value, median, unit):
    """How much worse than the median a value is, as a fraction of it (negative: better)."""
    if not median:
        return 0.0
    return (value - median) / median if unit == "us" else (median - value) / median


def outlier(value, others, unit, min_gap=MIN_GAP, max_z=MAX_Z):
    """(median, gap, z) if ``value`` is an outlier against ``others`` (the other nodes' values),
    else None.  The z-score is taken on the logarithms: performance spreads by factors, and one
    slow node among few must not widen the spread it is judged by."""
    med = statistics.median(others)
    gap = worse_by(value, med, unit)
    if gap < min_gap or value <= 0 or min(others) <= 0:
        return (med, gap, float("inf")) if gap >= min_gap and value <= 0 else None
    logs = [math.log(v) for v in others]
    center = statistics.median(logs)
    mad = statistics.median(abs(v - center) for v in logs)
    z = Z_SCALE * abs(math.log(value) - center) / mad if mad else float("inf")
    return (med, gap, z) if z > max_z else None


def reason_text(gap, unit, med, z):
    side = "above" if unit == "us" else "below"
    zs = "MAD 0" if z == float("inf") else f"robust z {z:.1f}"
    return f"{gap:.0%} {side} the fleet median {med:.4g} {unit} ({zs})"


def judge_nodes(values, units, min_gap=MIN_GAP, max_z=MAX_Z, variables=None):
    """Drain rows of the per-node variables: each node against the other nodes of its check."""
    rows = []
    for key, by_node in sorted(values.items()):
        check, _, var = key
        if len(by_node) < MIN_NODES or (variables and not variables.search(var)):
            continue
        unit = units[key]
        for node, value in sorted(by_node.items()):
            others = [v for n, v in by_node.items() if n != node]
            hit = outlier(value, others, unit, min_gap, max_z)
            if hit:
                med, gap, z = hit
                rows.append(dict(node=node, check=check, variable=var, value=value, fleet_median=med,
                                 reason=reason_text(gap, unit, med, z)))
    return rows


def pair_classes(tc):
    """{node: SLURM_TOPOLOGY_ADDR} of a node pair matrix's run (its results file's meta), or {}."""
    for folder in (tc.get("outputdir"), tc.get("stagedir")):
        path = os.path.join(folder or "", RESULTS_FILE)
        if folder and os.path.exists(path):
            try:
                with open(path) as fp:
                    placement = (json.load(fp).get("meta") or {}).get("placement") or {}
            except (OSError, json.JSONDecodeError, AttributeError):
                return {}
            return {h: a for h, a in zip(placement.get("hosts") or [], placement.get("topology_addr") or [])
                    if a}
    return {}


def judge_pairs(tc, min_gap=MIN_GAP, max_z=MAX_Z, variables=None):
    """Drain rows of a node pair matrix across nodes (the module's docstring): per variable base
    and pair class, each node's pairs against the class's pairs without that node."""
    nodes = case_nodes(tc)
    if len(nodes) < MIN_NODES:
        return []
    names = "|".join(re.escape(n) for n in sorted(nodes, key=len, reverse=True))
    pattern = re.compile(rf"^(?P<base>.+)_(?P<a>{names})-(?P<b>{names})(?P<flag>_nop2p)?$")
    addrs = pair_classes(tc)
    groups = defaultdict(list)  # (base, class) -> [(a, b, value, unit)]
    judged_unit = {}
    for var, value, unit in perf_values(tc):
        m = pattern.match(var)
        if not m or (variables and not variables.search(var)):
            continue
        a, b = m.group("a"), m.group("b")
        cls = switch_distance(addrs[a], addrs[b]) if a in addrs and b in addrs else "all"
        groups[(m.group("base"), cls)].append((a, b, value, unit))
        judged_unit[m.group("base")] = unit  # us: higher is worse (worse_by)
    slow = defaultdict(lambda: defaultdict(list))  # node -> base -> [(pair, value, median, reason) or None]
    for (base, _), pairs in groups.items():
        for node in nodes:
            others = [v for a, b, v, _ in pairs if node not in (a, b)]
            if not others:
                continue
            for a, b, value, unit in pairs:
                if node not in (a, b):
                    continue
                hit = outlier(value, others, unit, min_gap, max_z)
                slow[node][base].append(
                    (f"{a}-{b}", value, hit[0], reason_text(hit[1], unit, hit[0], hit[2])) if hit else None)
    rows = []
    for node in sorted(slow):
        for base, judged in sorted(slow[node].items()):
            bad = [j for j in judged if j]
            if len(bad) * 2 > len(judged):  # most of its pairs: the node, not one partner
                worst = (max if judged_unit[base] == "us" else min)(bad, key=lambda j: j[1])
                rows.append(dict(node=node, check=check_name(tc), variable=f"{base}_{worst[0]}", value=worst[1],
                                 fleet_median=worst[2],
                                 reason=f"{len(bad)} of {len(judged)} pairs with this node slow; worst: {worst[3]}"))
    return rows


def failed_rows(cases):
    """Drain rows of the single-node test cases that failed (their own references or sanity), and
    the multi-node failures as notes (which node is at fault is not known)."""
    rows, notes = [], []
    for tc in cases:
        if tc.get("result") != "fail":
            continue
        nodes = case_nodes(tc)
        why = (tc.get("fail_reason") or "").strip().splitlines()
        why = f"{tc.get('fail_phase') or 'failed'}: {why[0] if why else 'no reason given'}"
        if len(nodes) == 1:
            rows.append(dict(node=nodes[0], check=check_name(tc), variable="", value="", fleet_median="",
                             reason=f"check failed ({why})"))
        else:
            notes.append(f"{tc['name']} failed across {','.join(nodes) or 'unknown nodes'} ({why})")
    return rows, notes


def scontrol_lines(drain):
    """One ``scontrol update`` line per node to drain (for a person to run): the node name in
    single quotes, the reason in double quotes without the characters a shell would expand."""
    by_node = defaultdict(list)
    for row in drain:
        by_node[row["node"]].append(row)
    lines = []
    for node, rows in sorted(by_node.items()):
        first = rows[0]
        what = f"{first['check'].split(' ')[0]} {first['variable']}".strip()
        more = f" (+{len(rows) - 1} more)" if len(rows) > 1 else ""
        reason = re.sub(r"[\"'\\$`]", "", f"gpucomm acceptance: {what}: {first['reason']}{more}")
        quoted = "'" + node.replace("'", "'\\''") + "'"  # a shell word, whatever the name holds
        lines.append(f'scontrol update nodename={quoted} state=drain reason="{reason}"')
    return lines


def evaluate(cases, min_gap=MIN_GAP, max_z=MAX_Z, variables=None):
    """(drain rows, pass rows, notes) of one session's test cases."""
    values, units = fleet_values(cases)
    nodes = sorted({n for tc in cases for n in case_nodes(tc) if tc.get("result") in ("pass", "fail")})
    notes = []
    if len(nodes) < MIN_NODES:
        notes.append(f"{len(nodes)} node(s): fewer than {MIN_NODES}, the fleet comparison cannot judge; "
                     "the verdict rests on the checks' references alone")
    drain = judge_nodes(values, units, min_gap, max_z, variables)
    for tc in cases:
        if len(case_nodes(tc)) > 1 and tc.get("result") in ("pass", "fail"):
            drain += judge_pairs(tc, min_gap, max_z, variables)
    failed, more = failed_rows(cases)
    drain += failed
    notes += more
    to_drain = {r["node"] for r in drain}
    judged = defaultdict(lambda: [set(), 0])
    for (check, _, _), by_node in values.items():
        for node in by_node:
            judged[node][0].add(check)
            judged[node][1] += 1
    passed = [dict(node=n, checks=len(judged[n][0]), variables=judged[n][1]) for n in nodes if n not in to_drain]
    return drain, passed, notes


def write_csv(path, fields, rows):
    with open(path, "w", newline="") as fp:
        w = csv.DictWriter(fp, fieldnames=fields)
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})


def main(argv=None):
    ap = argparse.ArgumentParser(prog="gpucomm acceptance", description=__doc__.splitlines()[0])
    ap.add_argument("session", help="a ReFrame run report (JSON), or a stored session's uuid")
    ap.add_argument("--out", default=".", help="folder for drain.csv and pass.csv (default: here)")
    ap.add_argument("--min-gap", type=float, default=MIN_GAP,
                    help=f"smallest gap to the fleet median that flags a node (default {MIN_GAP})")
    ap.add_argument("--max-z", type=float, default=MAX_Z,
                    help=f"robust z-score above which a node is an outlier (default {MAX_Z})")
    ap.add_argument("--variables", metavar="REGEX", type=re.compile,
                    help="judge only the perf variables matching REGEX (e.g. goodput: bandwidths only)")
    args = ap.parse_args(argv)
    try:
        cases = read_session(args.session)
    except SessionError as exc:
        print(f"{ERROR_PREFIX} {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    drain, passed, notes = evaluate(cases, args.min_gap, args.max_z, args.variables)
    os.makedirs(args.out, exist_ok=True)
    write_csv(os.path.join(args.out, "drain.csv"), DRAIN_FIELDS, drain)
    write_csv(os.path.join(args.out, "pass.csv"), PASS_FIELDS, passed)
    for note in notes:
        print(f"note: {note}")
    nodes = {r["node"] for r in drain}
    print(f"{len(passed)} node(s) pass, {len(nodes)} to drain "
          f"({os.path.join(args.out, 'drain.csv')}, {os.path.join(args.out, 'pass.csv')})")
    for row in drain:
        print(f"  {row['node']}: {row['check']} {row['variable']} {row['reason']}")
    for line in scontrol_lines(drain):
        print(line)
    return EXIT_REPORT_FAIL if drain else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
