"""Every ``extras`` key that config/settings.py gives a partition or an environment, and every
one the tests write, is one the checks know (constants.Extras): a key spelt wrong in
config/systems/*.py or in a test's configuration would be silently ignored (the checks read
``extras.get(Extras.X)``), so it fails here, named with its system or its file."""

import pathlib
import re
import runpy

import pytest

from gpucomm.constants import Extras
from reframe_helpers import CONFIG

KNOWN = {v for k, v in vars(Extras).items() if not k.startswith("_")}
#: the first line of .ci/cluster-up.sh's slurm.conf, which makes ci's partition the cluster
CLUSTER_MARK = runpy.run_path(str(CONFIG.parent / "systems" / "ci.py"))["CLUSTER_MARK"]


@pytest.fixture(params=["one-node", "cluster"])
def settings(request, monkeypatch, tmp_path):
    """config/settings.py as ReFrame loads it; config/systems/ci.py's partition follows
    SLURM_CONF (unset: the one-node cluster; .ci/cluster-up.sh's slurm.conf: the 4-node one)."""
    if request.param == "cluster":
        conf = tmp_path / "slurm.conf"
        conf.write_text(CLUSTER_MARK + "\n")
        monkeypatch.setenv("SLURM_CONF", str(conf))
    else:
        monkeypatch.delenv("SLURM_CONF", raising=False)
    return request.param, runpy.run_path(str(CONFIG))["site_configuration"]


def test_every_extras_key_is_a_member_of_extras(settings):
    which, conf = settings
    ci = next(s for s in conf["systems"] if s["name"] == "ci")
    assert [p["name"] for p in ci["partitions"]] == (["cluster"] if which == "cluster" else ["slurm"])
    unknown = [f"{s['name']}:{p['name']}: {k}" for s in conf["systems"] for p in s["partitions"]
               for k in p.get("extras", {}) if k not in KNOWN]
    unknown += [f"environment {e['name']}: {k}" for e in conf["environments"]
                for k in e.get("extras", {}) if k not in KNOWN]
    assert unknown == []


#: an extras key as the tests write it: a dict under "extras" (a literal, ReFrame's JSON-like
#: configuration text, or a str.format template of one, with doubled braces) or ``extras[key]``
_EXTRAS_DICT = re.compile(r"""(?:["']extras["']\s*:|\bextras\s*=)\s*(\{+)""")
_EXTRAS_ITEM = re.compile(r"""\bextras\[["'](\w+)["']\]""")
_KEY = re.compile(r"""["'](\w+)["']\s*:""")


def extras_keys_in(text):
    """The extras keys written as strings in ``text``: the first-level keys of every dict under
    "extras" and every ``extras['key']``."""
    keys = set(_EXTRAS_ITEM.findall(text))
    for found in _EXTRAS_DICT.finditer(text):
        level = depth = len(found.group(1))
        pos = found.end()
        while depth >= level and pos < len(text):
            char = text[pos]
            if char in "{}":
                depth += 1 if char == "{" else -1
                pos += 1
                continue
            key = _KEY.match(text, pos) if depth == level and char in "\"'" else None
            if key:
                keys.add(key.group(1))
                pos = key.end()
            else:
                pos += 1
    return keys


def test_the_scan_finds_both_forms():
    text = ('{"extras": {"nodes": 1, "pair_classes": {"default": "all"}}}\n'
            'NODE = """"extras": {{"max_nodes": {n}, "qos_by_nodes": {{"x": 1}}}}}}"""\n'
            "env = SimpleNamespace(extras={'python': 'p'}); env.extras['topology'] = 'tree'\n")
    assert extras_keys_in(text) == {"nodes", "pair_classes", "max_nodes", "qos_by_nodes", "python",
                                    "topology"}


def test_every_extras_key_the_tests_write_is_a_member_of_extras():
    here = pathlib.Path(__file__).resolve()
    found = {}
    for path in sorted(here.parents[1].rglob("*.py")):
        if path != here:
            for key in extras_keys_in(path.read_text()):
                found.setdefault(key, path.relative_to(here.parents[2]))
    assert {"nodes", "gpu_aware_mpi_level", "pair_classes"} <= set(found)  # the scan works
    assert {k: str(p) for k, p in found.items() if k not in KNOWN} == {}
