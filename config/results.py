"""Where a run's results go, read by config/settings.py: ReFrame's results storage and the
performance log, for every system.

* Results storage (ReFrame's sqlite database, ``storage`` section): every session that ran (not a
  --dry-run) is stored in ``RESULTS_DB``, ``~/.reframe/reports/gpucomm.db``: a stable path outside
  the checkout, so that a nightly job that clones afresh keeps its history (RFM_SQLITE_DB_FILE
  moves it, RFM_ENABLE_RESULTS_STORAGE=n turns it off).  Night-to-night comparisons read it:
  ``reframe -c checks/ --mode health -r --performance-compare=now-1d:now/now-2d:now-1d/mean:+partition/+result``
  or ``--list-stored-sessions`` and ``--describe-stored-sessions`` (docs/results.md).
* Performance log (``logging`` section): one line per perf variable (``perflog_multiline``) with
  the fields of ``PERFLOG_FIELDS``, in this order, under perflogs/<system>/<partition>/<check>.log;
  ``reference_note`` says where a line's reference does not judge it ("no reference ... yet",
  "the paper's figures, as information"), so that a pass is never read as a figure's.
  ReFrame's default format writes every check variable and one column per perf variable, so its
  header, and the file it rotates to ``.h0`` when the header changes, follow every ``-S`` change;
  this header never changes.
* An ``httpjson`` handler for sites with a dashboard (Elasticsearch, Grafana, ...): off unless
  GPUCOMM_PERFLOG_URL is set to the endpoint (e.g. http://dashboard:9200/gpucomm/_doc); each
  record carries ``extras`` ``{"facility": "gpucomm"}`` and the same fields as JSON.
* A ``--dry-run`` measures nothing: it has no perflog handler, so it neither writes lines that
  say "pass" with null values nor posts them to the dashboard (ReFrame logs every test case it
  finalises, a dry run's too; this file is read after the command line, which names the run).
"""

import os
import sys

#: ReFrame's results database for gpucomm sessions (docs/results.md)
RESULTS_DB = "${HOME}/.reframe/reports/gpucomm.db"
#: per-session JSON run reports of the modes (config/modes.py): {sessionid} is ReFrame's
#: counter over the files already there
SESSION_REPORT = "${HOME}/.reframe/reports/gpucomm-run-{sessionid}.json"

#: the perflog's fields, one line per perf variable: never a header that follows the options
PERFLOG_FIELDS = ("check_job_completion_time", "check_job_completion_time_unix", "check_system", "check_partition",
                  "check_environ",
                  "check_display_name", "check_result", "check_perf_var", "check_perf_value",
                  "check_perf_unit", "check_perf_ref", "check_perf_lower_thres",
                  "check_perf_upper_thres", "check_perf_result", "check_reference_note",
                  "check_jobid", "check_job_nodelist", "check_fail_reason")
PERFLOG_DELIM = "|"

_filelog = {
    "type": "filelog",
    "prefix": "%(check_system)s/%(check_partition)s",
    "level": "info",
    "format": PERFLOG_DELIM.join(f"%({f})s" for f in PERFLOG_FIELDS),
    "append": True,
}

_handlers = [_filelog]
if os.environ.get("GPUCOMM_PERFLOG_URL"):
    _handlers.append({
        "type": "httpjson",
        "url": os.environ["GPUCOMM_PERFLOG_URL"],
        "level": "info",
        "extras": {"facility": "gpucomm"},
        "ignore_keys": ["check_perfvalues"],
    })

#: whether this ReFrame command is a --dry-run (or an abbreviation argparse accepts for it)
DRY_RUN = any(len(arg) > 4 and "--dry-run".startswith(arg) for arg in sys.argv[1:])

site_configuration = {
    "storage": [{"enable": True, "sqlite_db_file": RESULTS_DB}],
    "logging": [{"perflog_multiline": True, "handlers_perflog": [] if DRY_RUN else _handlers}],
}
