"""Reading a finished payload run inside ReFrame: deferred sanity and performance functions.

Everything here reads the payload's output through gpucomm.contract; a run that did not finish
or failed is a SanityError with the payload's own reason (its ``gpucomm: error:`` line)."""

import json
import os

import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

from ..constants import ANY_PLACEMENT
from ..contract import by_method_size, by_size, first_error, parse_output, record_value
from ..sizes import size_label


def _read(path):
    try:
        with open(path) as fp:
            return fp.read()
    except OSError:
        return ""


def payload_error(stderr_path):
    """The payload's reason from the job's stderr, or ''."""
    return first_error(_read(stderr_path))


def finished_run(stdout, stderr, index=by_size):
    """(records indexed by ``index``, summary) of a payload run that finished without an
    error; else a SanityError with the payload's reason."""
    try:
        with open(stdout) as fp:
            records, summary = parse_output(fp.read())
    except OSError as exc:
        raise SanityError(f"no payload output: {exc}")
    if summary is None:
        reason = payload_error(stderr) or "no GPUCOMM-DONE line (the payload crashed or was killed)"
        raise SanityError(f"payload did not finish: {reason}")
    if not summary.get("ok"):
        raise SanityError(f"payload failed: {summary.get('error') or payload_error(stderr)}")
    return index(records), summary


def records_of(stdout, index=by_size):
    """The records of a run's stdout, indexed by ``index`` (no check that it finished)."""
    with open(stdout) as fp:
        return index(parse_output(fp.read())[0])


@sn.deferrable
def payload_ok(stdout, stderr, sizes):
    """True if the payload finished and validated every size; else a SanityError with its reason."""
    records, _ = finished_run(stdout, stderr)
    missing = [s for s in sizes if s not in records or not records[s].get("validated")]
    if missing:
        raise SanityError(f"sizes not validated: {', '.join(size_label(s) for s in missing)}")
    return True


@sn.deferrable
def sweep_ok(stdout, stderr, methods, sizes):
    """True if every method of a several-method run ran and validated every size; else a
    SanityError naming what not."""
    recs, summary = finished_run(stdout, stderr, by_method_size)
    status = summary.get("methods") or {summary.get("method"): "ok"}
    bad = [f"{m}: {status.get(m, 'did not run')}" for m in methods if status.get(m) != "ok"]
    if bad:
        raise SanityError("methods that did not run: " + "; ".join(bad))
    missing = [f"{m} {size_label(s)}" for m in methods for s in sizes
               if not recs.get((m, s), {}).get("validated")]
    if missing:
        raise SanityError(f"not validated: {', '.join(missing)}")
    return True


@sn.deferrable
def placement_ok(results_path, wanted):
    """True if the payload's nodes sit where ``wanted`` (a placement) asked, or where that cannot
    be told (no topology information); else a SanityError naming the nodes and their distance."""
    if wanted == ANY_PLACEMENT:
        return True
    try:
        with open(results_path) as fp:
            placement = json.load(fp)["meta"]["placement"]
    except (OSError, ValueError, KeyError) as exc:
        raise SanityError(f"no placement record in {os.path.basename(results_path)}: {exc}")
    got = placement["distance"]
    if got not in ("unknown", wanted):
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
