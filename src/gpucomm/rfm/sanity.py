"""Reading a finished payload run inside ReFrame: deferred sanity and performance functions.

Everything here reads the payload's output through gpucomm.contract; a run that did not finish
or failed is a SanityError with the payload's own reason (its ``gpucomm: error:`` line)."""

import glob
import json
import os
import re

import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError, SkipTestError

from ..constants import ANY_PLACEMENT
from ..contract import (
    CAPPED_AT,
    DamagedOutput,
    by_method_size,
    by_size,
    first_error,
    parse_output,
    record_value,
    split_launches,
)
from ..site.preflight import ERROR_LINE, PREFLIGHT_TAG
from ..sizes import size_label


def read_text(path):
    """The text of one of the job's files ('' where there is none: a run that never wrote it)."""
    try:
        with open(path) as fp:
            return fp.read()
    except OSError:
        return ""


def payload_error(stderr_path):
    """The payload's reason from the job's stderr, or ''."""
    return first_error(read_text(stderr_path))


#: what Slurm's srun and slurmstepd print when a job step ended under the payload: a node that
#: failed (its slurmd gone), a cancellation with its cause (node failure, time limit), a task
#: that a signal ended (before the payload could say anything, e.g. a crash in MPI_Init)
_SLURM_NODE_FAILURE = re.compile(r"srun: error: Node failure on (\S+)")
_SLURM_CANCELLED = re.compile(r"\*\*\* ((?:JOB|STEP) \S+) ON (\S+) CANCELLED AT \S+ (DUE TO [A-Z ]*[A-Z])")
_SLURM_TASK_SIGNAL = re.compile(r"srun: error: (\S+): tasks? ([\d,-]+): (Segmentation fault|Bus error|"
                                r"Aborted|Illegal instruction|Floating point exception)")


def scheduler_error(stderr_path):
    """Why Slurm ended the job under the payload, from the job's stderr ('node failure on gcn3',
    'step 17.0 on gcn1 cancelled due to time limit', 'task 3 on gcn4: segmentation fault'),
    or ''."""
    text = read_text(stderr_path)
    failed = _SLURM_NODE_FAILURE.search(text)
    if failed:
        return f"Slurm: node failure on {failed.group(1)}"
    cancelled = _SLURM_CANCELLED.search(text)
    if cancelled:
        what, where, why = cancelled.groups()
        return f"Slurm: {what.lower()} on {where} cancelled {why.lower()}"
    signalled = _SLURM_TASK_SIGNAL.search(text)
    if signalled:
        where, task, what = signalled.groups()
        return f"Slurm: task {task} on {where}: {what.lower()}"
    return ""


#: lines of a job's stderr that say nothing: blank, rules (Open MPI frames its messages in
#: dashes), a traceback's frames (its exception line is kept)
_NOISE = re.compile(r"^\s*$|^[\s\-=*_#]+$|^\s+File \"|^Traceback \(most recent call last\):")


def stderr_excerpt(stderr_path, lines=3, width=400):
    """The first ``lines`` meaningful lines of a job's stderr (rfm_job.err), each once, joined
    on one line and cut at ``width`` characters, or '' (a failed launch's own words: mpirun or
    srun refusing, an interpreter that cannot import gpucomm, a missing library)."""
    text = read_text(stderr_path)
    kept, in_traceback = [], False
    for line in text.splitlines():
        if line.startswith("Traceback (most recent call last):"):
            in_traceback = True
            continue
        if in_traceback:
            if line.startswith((" ", "\t")):
                continue  # a frame, or the source line under it
            in_traceback = False
        if _NOISE.match(line):
            continue
        line = " ".join(line.split())
        if line not in kept:
            kept.append(line)
        if len(kept) == lines:
            break
    out = " ".join(kept)
    return out if len(out) <= width else out[:width - 3] + "..."


def not_finished_reason(stderr_path):
    """Why a launch gave no GPUCOMM-DONE line: Slurm's reason and the payload's own error line,
    where either said one, else the first
    meaningful lines of the job's stderr, else that it crashed or was killed without a word."""
    said = [r for r in (scheduler_error(stderr_path), payload_error(stderr_path)) if r]
    if said:
        return "; ".join(said)
    excerpt = stderr_excerpt(stderr_path)
    where = os.path.basename(str(stderr_path))
    if excerpt:
        return f"no GPUCOMM-DONE line; {where} says: {excerpt}"
    return f"no GPUCOMM-DONE line and nothing in {where} (the payload crashed or was killed)"


def finished_run(stdout, stderr, index=by_size):
    """(records indexed by ``index``, summary) of a payload run that finished without an
    error; else a SanityError with the payload's reason."""
    try:
        with open(stdout) as fp:
            records, summary = parse_output(fp.read())
    except OSError as exc:
        raise SanityError(f"no payload output: {exc}") from exc
    except DamagedOutput as exc:
        raise SanityError(f"payload output damaged: {exc}") from None
    if summary is None:
        raise SanityError(f"payload did not finish: {not_finished_reason(stderr)}")
    if not summary.get("ok"):
        raise SanityError(f"payload failed: {summary.get('error') or payload_error(stderr)}")
    return index(records), summary


def records_of(stdout, index=by_size):
    """The records of a run's stdout, indexed by ``index`` (no check that it finished)."""
    with open(stdout) as fp:
        return index(parse_output(fp.read())[0])


def memory_cap(stdout, method=None):
    """The largest size the payload's memory let a default sweep reach, where it stopped one
    (contract.CAPPED_AT of ``method``'s records, the smallest of any method's where None); None
    where none was stopped or there is no output yet."""
    try:
        runs = split_launches(read_text(stdout))
    except DamagedOutput:
        return None
    caps = [r[CAPPED_AT] for rs, _ in runs for r in rs
            if CAPPED_AT in r and method in (None, r.get("method"))]
    return min(caps, default=None)


@sn.deferrable
def payload_ok(stdout, stderr, sizes):
    """True if the payload finished and validated every size; else a SanityError with its reason."""
    records, _ = finished_run(stdout, stderr)
    missing = [s for s in sizes if s not in records or not records[s].get("validated")]
    if missing:
        raise SanityError(f"sizes not validated: {', '.join(size_label(s) for s in missing)}")
    return True


def preflights(text):
    """The GPUCOMM-PREFLIGHT summaries of a job's stdout, in order."""
    return [json.loads(line[len(PREFLIGHT_TAG) + 1:]) for line in text.splitlines()
            if line.startswith(PREFLIGHT_TAG + " ")]


@sn.deferrable
def preflight_ok(stdout, stderr, recipe=""):
    """True if every preflight of the job passed; else a SanityError with its one-line reason
    (so that a job the preflight ended says why, not "no GPUCOMM-DONE line")."""
    found = preflights(read_text(stdout))
    where = f" (build the payload's venv per {recipe})" if recipe else ""
    if not found:
        lines = [ln.strip() for ln in read_text(stderr).splitlines() if ln.strip()]
        own = [ln.split(ERROR_LINE, 1)[1] for ln in lines if ERROR_LINE in ln]
        if own:
            raise SanityError(f"preflight failed: {own[0]}")
        excerpt = stderr_excerpt(stderr)
        said = f" ({excerpt})" if excerpt else ""
        raise SanityError("preflight failed: no GPUCOMM-PREFLIGHT line, the payload's interpreter "
                          f"did not start{said}{where}")
    for summary in found:
        if not summary.get("ok"):
            raise SanityError(f"preflight failed for {','.join(summary.get('methods', []))}: "
                              f"{summary.get('error')} [{summary.get('python')}]{where}")
    return True


@sn.deferrable
def ccl_net_ok(log_glob, pattern, fallback_pattern=None, plugin=""):
    """True if the NCCL/RCCL debug logs (NCCL_DEBUG_FILE, ``log_glob`` in the stage directory)
    show ``pattern`` (the network plugin over the expected provider, e.g. "NET/OFI Selected
    provider is cxi"); else a SanityError naming the cause and the plugin module."""
    load = f": load the plugin module {plugin} (extras['ccl_plugin_module'])" if plugin else ""
    text = ""
    paths = sorted(glob.glob(log_glob))
    for path in paths:
        text += read_text(path)
    if not paths:
        raise SanityError(f"no NCCL/RCCL debug log ({log_glob}): cannot tell which network "
                          "NCCL/RCCL used")
    if fallback_pattern and re.search(fallback_pattern, text):
        raise SanityError(f"NCCL/RCCL fell back to its socket transport ('{fallback_pattern}' in "
                          f"{log_glob}){load}")
    if pattern and not re.search(pattern, text):
        raise SanityError(f"NCCL/RCCL did not select the network plugin: no '{pattern}' in "
                          f"{log_glob}{load}")
    return True


def launches(text):
    """[(records, summary)] of each payload launch in a job's stdout (a launch ends with its
    GPUCOMM-DONE line; a last one without it has summary None)."""
    try:
        return split_launches(text)
    except DamagedOutput as exc:
        raise SanityError(f"payload output damaged: {exc}") from None


@sn.deferrable
def sweep_ok(stdout, stderr, methods, sizes, launches_expected=1):
    """True if every method of a several-method run (one or more launches) ran and validated
    every size; else a SanityError naming what not."""
    try:
        text = open(stdout).read()
    except OSError as exc:
        raise SanityError(f"no payload output: {exc}") from exc
    runs = launches(text)
    done = [s for _, s in runs if s is not None]
    if len(done) < launches_expected:
        raise SanityError(f"payload did not finish ({len(done)} of {launches_expected} launches): "
                          f"{not_finished_reason(stderr)}")
    recs = by_method_size([r for rs, _ in runs for r in rs])
    status = {}
    for summary in done:
        methods_of = summary.get("methods")
        if methods_of:
            status.update(methods_of)
        else:
            status[summary.get("method")] = "ok" if summary.get("ok") else \
                f"failed: {summary.get('error') or payload_error(stderr)}"
    bad = [f"{m}: {status.get(m, 'did not run')}" for m in methods if status.get(m) != "ok"]
    if bad:
        raise SanityError("methods that did not run: " + "; ".join(bad))
    caps = {m: memory_cap(stdout, m) for m in methods}  # a default sweep stopped by memory
    missing = [f"{m} {size_label(s)}" for m in methods for s in sizes
               if not recs.get((m, s), {}).get("validated") and (caps[m] is None or s <= caps[m])]
    if missing:
        raise SanityError(f"not validated: {', '.join(missing)}")
    return True


@sn.deferrable
def placement_ok(results_path, wanted, topology=None, proof=None):
    """True if the payload's nodes sit where ``wanted`` (a placement) asked; a SanityError naming
    the nodes and their distance where they do not; and a skip (SkipTestError, which ReFrame
    takes in the sanity stage too) naming the reason where the job cannot tell (distance
    'unknown', e.g. no SLURM_TOPOLOGY_ADDR): an unconfirmed placement is never a pass.  Where
    the payload's record is unknown, ``proof`` ((distance, source) from another record of the
    job, site.placement) decides, its source named.  Where the partition says Slurm reports the
    topology (``topology``, its extras['topology'], e.g. 'tree'), an unknown placement is a
    SanityError: something hid what Slurm said."""
    if wanted == ANY_PLACEMENT:
        return True
    try:
        with open(results_path) as fp:
            placement = json.load(fp)["meta"]["placement"]
    except (OSError, ValueError, KeyError) as exc:
        raise SanityError(f"no placement record in {os.path.basename(results_path)}: {exc}") from exc
    if placement["distance"] == "unknown" and proof:
        known = proof[0] != "unknown"
        source = proof[1] if known else f"{placement.get('source')}; {proof[1]}"
        placement = dict(placement, distance=proof[0], source=source)
    got = placement["distance"]
    if got == "unknown" and topology:
        raise SanityError(f"placement {wanted} asked for, but the job cannot confirm it "
                          f"({placement.get('source', 'no topology information')}) on a partition "
                          f"whose Slurm reports its topology (extras['topology'] = {topology})")
    if got == "unknown":
        raise SkipTestError(f"placement {wanted} asked for, but the job cannot confirm it "
                            f"({placement.get('source', 'no topology information')}): give the "
                            "nodes with -S nodelist=... and check them against the site's topology")
    if got != wanted:
        nodes = ", ".join(f"{h} ({a})" for h, a in zip(placement["hosts"], placement["topology_addr"]))
        raise SanityError(f"placement {wanted} asked for, but the nodes are {got}: {nodes} "
                          f"({placement['source']})")
    return True


@sn.deferrable
def point_value(stdout, key, field, index=by_size):
    """One number of a run: the record at ``key`` (a size, or (method, size) with
    index=by_method_size), its ``field`` (contract.record_value)."""
    return record_value(records_of(stdout, index)[key], field)


def read_meta(results_path):
    """The meta of the kept results file, or {}."""
    try:
        with open(results_path) as fp:
            return json.load(fp).get("meta", {})
    except (OSError, ValueError):
        return {}
