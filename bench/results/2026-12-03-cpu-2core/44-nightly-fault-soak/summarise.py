"""The soak's figures from WORK/sessions.tsv and the reports (soak.sh)."""
import json, os, sqlite3, sys

work = sys.argv[1]
rows = [ln.rstrip("\n").split("\t") for ln in open(os.path.join(work, "sessions.tsv"))]
right, lines = 0, []
for s, fault, rc, secs, orph, reason in rows:
    ok = {"clean": rc == "0", "sigterm": rc == "143" and "stopped by SIGTERM" in reason}.get(fault, rc != "0")
    right += ok
    lines.append(f"{s} {fault:12} exit {rc:>3} {secs:>4} s orphans {orph} {'right' if ok else 'WRONG'}: {reason}")
reports = [r for r in (os.path.join(work, s[0], "report.json") for s in rows) if os.path.exists(r)]
readable = 0
for r in reports:
    try:
        json.load(open(r)); readable += 1
    except ValueError:
        pass
written = [s for s, fault, rc, *_ in rows if os.path.exists(os.path.join(work, s, "report.json"))]
try:
    with sqlite3.connect(os.path.join(work, "results.db")) as db:
        stored = db.execute("select count(*) from sessions").fetchone()[0]
    db_ok = "readable"
except sqlite3.Error as exc:
    stored, db_ok = 0, f"unreadable: {exc}"
faults = sum(f != "clean" for _, f, *_ in rows)
print("\n".join(lines))
print(f"sessions: {len(rows)}; faults: {faults}; verdicts right: {right} of {len(rows)}; "
      f"orphans after sessions (sum): {sum(int(r[4]) for r in rows)}; "
      f"reports written: {len(written)}, still readable at the end: {readable} (results lost: {len(written) - readable}); "
      f"results database: {db_ok}, {stored} sessions stored")
for name in ("all-report.txt", "db-report.txt"):
    text = open(os.path.join(work, name)).read().splitlines()
    print(name + ": " + " | ".join(ln for ln in text if ln.startswith(("gpucomm health", "report "))))
