"""gpucomm ReFrame configuration: aggregates every file in config/systems/.

    export RFM_CONFIG_FILES=$PWD/config/settings.py             # once (or: source env.sh)
    reframe -c checks/ -r                                       # autodetected local machine
    reframe --system alps -c checks/ -r                         # a named site
    reframe -C config/settings.py -c checks/ -r                 # the same, without the export

Each systems/<name>.py defines ``site_configuration`` with 'systems' and 'environments'
(and optionally 'modes').  The catch-all ``local`` system (hostnames '.*') is kept last so
that a site whose hostnames match is picked first.  Every partition gets the feature
constants.FEATURE_GPUCOMM, the mark the checks select on: under another configuration (ReFrame's
builtin 'generic' system) only checks/config.py's check is selected, and it fails saying how to
load this one.
"""

import importlib.util
import os

from gpucomm.constants import FEATURE_GPUCOMM

_HERE = os.path.dirname(os.path.abspath(__file__))
_SYSTEMS_DIR = os.path.join(_HERE, "systems")


def _load(path):
    name = "gpucomm_config_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.site_configuration


def _system_files():
    files = sorted(f for f in os.listdir(_SYSTEMS_DIR) if f.endswith(".py") and not f.startswith("_"))
    files.sort(key=lambda f: f == "local.py")  # the catch-all last
    return [os.path.join(_SYSTEMS_DIR, f) for f in files]


site_configuration = {"systems": [], "environments": [], "modes": [], "general": []}
for _path in _system_files():
    _conf = _load(_path)
    for _key in ("systems", "environments", "modes", "general"):
        site_configuration[_key] += _conf.get(_key, [])

for _system in site_configuration["systems"]:
    for _part in _system["partitions"]:
        _part["features"] = list(_part.get("features", [])) + [FEATURE_GPUCOMM]

# run modes shared by every system (health, acceptance, paper): config/modes.py
if os.path.exists(os.path.join(_HERE, "modes.py")):
    site_configuration["modes"] += _load(os.path.join(_HERE, "modes.py")).get("modes", [])
# results storage and the performance log, for every system: config/results.py
for _key, _value in _load(os.path.join(_HERE, "results.py")).items():
    site_configuration[_key] = _value
for _key in ("modes", "general"):
    if not site_configuration[_key]:
        del site_configuration[_key]
