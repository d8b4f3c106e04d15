"""What a run shows: rank 0's human table on stdout, one record line per size, the summary
line, and the --json file (the formats are gpucomm.contract's)."""

import contextlib
import json
import os
import sys

from .. import __version__
from ..contract import TIMED_LOOP, TIMED_LOOP_NOTE, done_line, result_line
from ..errors import GpucommError
from ..sizes import size_label


class Output:
    """Rank 0's human table on stdout, one JSON record per size, and the --json file."""

    def __init__(self, cfg, enabled):
        self.cfg, self.enabled = cfg, enabled
        self.meta, self.metas, self.records = None, [], []
        self.cases = None
        #: a --json file of an earlier run: a failed run does not replace it
        self.json_existed = bool(enabled and cfg.json_path and os.path.exists(cfg.json_path))

    def begin(self, meta, cases=None):
        """A method's run starts: its meta, and its records' case label (operations with several
        cases per size), then its header."""
        self.meta, self.cases = meta, cases
        self.metas.append(meta)
        self.header()

    def note(self, text):
        if self.enabled:
            print(f"# {text}", flush=True)

    def header(self):
        if not self.enabled:
            return
        m = self.meta
        print(f"# gpucomm {__version__} {m['op']} method={m['method']} backend={m['backend']} "
              f"ranks={m['nranks']} nodes={m['nodes']} devices={','.join(map(str, m['devices']))}")
        loop = "CUDA/HIP graph of each sample's iterations" if m["graph"] else "plain loop"
        reqs = f" mpi-requests={m['mpi_requests']}" if m.get("mpi_requests") else ""
        reqs += f" peer-sync={m['peer_sync']}" if m.get("peer_sync") else ""
        if m.get(TIMED_LOOP):
            note = m.get(TIMED_LOOP_NOTE)
            reqs += f" timed-loop={m[TIMED_LOOP]}" + (f" ({note})" if note else "")
        print(f"# timer={m['timer']} loop={loop}{reqs} mpi={m['mpi']}" +
              (f" gpu-aware-mpi: {m['gpu_aware_mpi']}" if m.get("gpu_aware_mpi") else ""))
        if m["nodes"] > 1 or m["physical_nodes"] > 1:
            names = " ".join(f"{i}={h}" for i, h in enumerate(m["node_names"]))
            emu, pl = m["emulated_ranks_per_node"], m["placement"]
            emulated = f" (emulated, {emu} rank{'s' * (emu > 1)} per node)" if emu else ""
            print(f"# nodes {names}{emulated}; placement {pl['distance']} ({pl['source']})")
        if m.get("test_hook"):
            print(f"# TEST HOOK ACTIVE: {m['test_hook']} (fault injection; the numbers are not real)")
        if m.get("test_hook_idle"):
            print(f"# test hook set: {m['test_hook_idle']}")
        if m.get("nominal_GBps"):
            print(f"# nominal link bandwidth {m['nominal_GBps']:.1f} GB/s ({m['nominal_source']})")
        if not self.cfg.quiet:
            print("# " + (f"{'case':>16} " if self.cases else "") +
                  f"{'size':>10} {'iters':>6} {'batch':>5} {'median_us':>11} {'min_us':>10} {'p05_us':>10} "
                  f"{'p95_us':>10} {'max_us':>10} {'goodput_GB/s':>13} {'busbw_GB/s':>11} valid")
        sys.stdout.flush()

    def record(self, rec):
        self.records.append(rec)
        if not self.enabled:
            return
        t = rec["time_us"]
        if not self.cfg.quiet:
            case = f"{self.cases(rec):>16} " if self.cases else ""
            print(f"  {case}{size_label(rec['size']):>10} {rec['iters']:>6} {rec['batch']:>5} "
                  f"{t['median']:>11.2f} {t['min']:>10.2f} "
                  f"{t['p05']:>10.2f} {t['p95']:>10.2f} {t['max']:>10.2f} {rec['goodput_GBps']:>13.3f} "
                  f"{rec['busbw_GBps']:>11.3f} {'yes' if rec['validated'] else 'NO'}")
        print(result_line(rec))
        sys.stdout.flush()

    def done(self, ok, error=None, status=None):
        """The run's last line (GPUCOMM-DONE) and the --json file.  With several methods,
        ``status`` says per method 'ok', 'skipped: why' or 'failed: why'.  The file is written
        whole or not at all (a temporary file renamed); a failed run leaves an earlier run's
        file as it was.  Returns why the file could not be written (a failed run's second
        line), or None; on a run that passed, that is an error (GpucommError)."""
        if not self.enabled:
            return None
        summary = {"ok": ok, "sizes": len(self.cfg.sizes), "validated": sum(r["validated"] for r in self.records),
                   "op": self.cfg.op, "method": self.cfg.method}
        if status and "," in self.cfg.method:
            summary["methods"] = status
        if error:
            summary["error"] = error
        print(done_line(summary))
        sys.stdout.flush()
        path = self.cfg.json_path
        if not path:
            return None
        if not ok and self.json_existed:
            return f"--json {path}: left as an earlier run wrote it (this run failed)"
        doc = {"meta": self.metas[0] if self.metas else {"op": self.cfg.op, "method": self.cfg.method},
               "summary": summary, "results": self.records}
        if len(self.metas) > 1:
            doc["metas"] = self.metas
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w") as fp:
                json.dump(doc, fp, indent=1)
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            why = f"--json {path}: cannot write it ({exc.strerror})"
            if ok:
                raise GpucommError(why) from None
            return why
        return None
