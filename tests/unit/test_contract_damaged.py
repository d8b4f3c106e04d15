"""A damaged payload line is one line of reason; a job's stdout splits into its launches."""

import json

import pytest

from gpucomm.contract import DamagedOutput, done_line, parse_output, result_line, split_launches

REC = {"op": "pingpong", "method": "host", "size": 8}


def test_damaged_result_line_is_one_line_reason():
    text = result_line(REC) + "\n" + result_line(REC)[:40] + "\n"
    with pytest.raises(DamagedOutput) as info:
        parse_output(text)
    message = str(info.value)
    assert "\n" not in message and "GPUCOMM-RESULT" in message and "output line 2" in message
    assert "decoder.py" not in message
    assert isinstance(info.value, json.JSONDecodeError)  # readers that skip a damaged line still do


def test_split_launches_after_terminal_codes():
    """Two launches, the second's DONE line behind a terminal reset (another rank's colorama),
    then a third cut short."""
    text = "\n".join([result_line(REC), done_line({"ok": True}),
                      "\x1b[0m" + result_line(dict(REC, size=16)), "\x1b[0m" + done_line({"ok": False}),
                      result_line(dict(REC, size=32))])
    runs = split_launches(text)
    assert [([r["size"] for r in recs], s and s["ok"]) for recs, s in runs] == \
        [([8], True), ([16], False), ([32], None)]
    assert split_launches("") == [([], None)]


def test_sanity_says_damaged_output_in_one_line(tmp_path):
    pytest.importorskip("reframe")
    from reframe.core.exceptions import SanityError

    from gpucomm.rfm.sanity import launches
    with pytest.raises(SanityError) as info:
        launches(result_line(REC)[:30])
    assert "payload output damaged" in str(info.value) and "\n" not in str(info.value)
