"""The output contract read back (contract.parse_output) as the checks read it."""

import json

from gpucomm.contract import done_line, parse_output, result_line


def test_terminal_resets_written_by_another_rank_do_not_hide_a_line():
    """21-every-method: rank 1's exit wrote colorama's reset (ESC[0m, no newline) into the
    shared output just before rank 0's GPUCOMM-DONE line, and the check saw no DONE line."""
    rec = {"size": 8, "validated": True}
    text = "\n".join(["# header", result_line(rec), "\x1b[0m" + result_line(dict(rec, size=16)),
                      "\x1b[0m" + done_line({"ok": True}), "\x1b[0m"]) + "\n"
    records, summary = parse_output(text)
    assert [r["size"] for r in records] == [8, 16] and summary == {"ok": True}


def test_a_tag_inside_a_line_is_not_a_record():
    records, summary = parse_output("echo " + result_line({"size": 8}) + "\n")
    assert records == [] and summary is None
    assert json.loads(done_line({"ok": False}).split(" ", 1)[1]) == {"ok": False}
