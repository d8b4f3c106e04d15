"""A site is a documented, checked unit (docs/sites/adding-a-site.md): every site config gives
every key a site needs, and a missing one is one line naming it.

A *site* is a system of config/systems/ with a recipe page docs/sites/<name>.md (Alps, Leonardo,
LUMI); the CI and GPU clusters and the autodetected local system are checked for what every
system needs (partitions, launcher, scheduler, environments)."""

import copy
import json
import os
import runpy
from pathlib import Path

import pytest

from gpucomm.constants import ACCOUNT_UNSET, FEATURE_GPU, FEATURE_MPI, FEATURE_NCCL, FEATURE_RCCL, METHODS, Extras
from gpucomm.site.siteconf import BIND_WRAPPER
from reframe_helpers import REPO

#: every system, every partition
SYSTEM_KEYS = ("descr", "hostnames", "partitions")
PARTITION_KEYS = ("scheduler", "launcher", "environs")
#: a site's partition: its extras, those a check reads there (constants.Extras)
SITE_PARTITION_EXTRAS = (Extras.LAUNCHER_OPTIONS, Extras.METHOD_ENV_VARS, Extras.LINK_BANDWIDTH,
                         Extras.GPU_BANDWIDTH, Extras.NETWORK_BANDWIDTH, Extras.MAX_NODES, Extras.NICS,
                         Extras.PLACEMENT_OPTIONS)
#: a site's environment: its extras
SITE_ENV_EXTRAS = (Extras.PYTHON, Extras.RECIPE, Extras.METHOD_ENV_VARS)


def load_config(monkeypatch):
    for var in [v for v in os.environ if v.startswith(("SBATCH_", "SLURM_", "RFM_", "GPUCOMM_"))]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("RFM_RESOLVE_MODULE_CONFLICTS", "n")
    return runpy.run_path(str(REPO / "config" / "settings.py"))["site_configuration"]


def node_class_partitions():
    return runpy.run_path(str(REPO / "config" / "nodeclasses.py"))["PARTITIONS"]


def is_site(system, root=REPO):
    return (root / "docs" / "sites" / f"{system['name']}.md").exists()


def missing_keys(config, node_classes, references=REPO / "config" / "references", root=REPO):
    """One line per key a system of ``config`` lacks (docs/sites/adding-a-site.md); a site is a
    system with a recipe page under ``root``'s docs/sites."""
    lines = []
    environs = {}
    for env in config["environments"]:
        for target in env.get("target_systems", ["*"]):
            environs.setdefault(target, {})[env["name"]] = env
    for system in config["systems"]:
        name = system["name"]
        lines += [f"{name}: no '{key}'" for key in SYSTEM_KEYS if not system.get(key)]
        if is_site(system, root) and not (references / f"{name}.yaml").exists():
            lines.append(f"{name}: no references file config/references/{name}.yaml")
        for part in system.get("partitions", []):
            lines += partition_missing(system, part, environs.get(name, {}), node_classes, root)
    return lines


def partition_missing(system, part, environs, node_classes, root=REPO):
    where = f"{system['name']}:{part.get('name', '?')}"
    lines = [f"{where}: no '{key}'" for key in PARTITION_KEYS if not part.get(key)]
    for env_name in part.get("environs", []):
        if env_name not in environs:
            lines.append(f"{where}: environment '{env_name}' not defined for {system['name']}")
    if not is_site(system, root):
        return lines
    access = part.get("access", [])
    for flag in ("--partition=", "--account="):  # account handling: site.siteconf.slurm_access
        if not any(str(a).startswith(flag) for a in access):
            lines.append(f"{where}: access has no {flag} (site.siteconf.slurm_access)")
    if where not in node_classes:
        lines.append(f"{where}: no node class (config/nodeclasses.py PARTITIONS)")
    extras = part.get("extras", {})
    lines += [f"{where}: no extras['{key}']" for key in SITE_PARTITION_EXTRAS if key not in extras]
    if not str((extras.get(Extras.LAUNCHER_OPTIONS) or [""])[-1]).endswith(BIND_WRAPPER):
        lines.append(f"{where}: extras['{Extras.LAUNCHER_OPTIONS}'] does not end with {BIND_WRAPPER}")
    if FEATURE_GPU in part.get("features", []):
        if not any(d.get("type") == "gpu" and d.get("num_devices") for d in part.get("devices", [])):
            lines.append(f"{where}: a gpu partition without devices [{{'type': 'gpu', 'num_devices': N}}]")
        if not any(r.get("name") == "_rfm_gpu" for r in part.get("resources", [])):
            lines.append(f"{where}: no '_rfm_gpu' resource (site.siteconf.gpu_resource)")
    for env_name in part.get("environs", []):
        lines += environment_missing(where, environs.get(env_name))
    return lines


def environment_missing(where, env):
    if env is None:
        return []
    at = f"{where}+{env['name']}"
    extras, features = env.get("extras", {}), env.get("features", [])
    lines = [f"{at}: no extras['{key}']" for key in SITE_ENV_EXTRAS if key not in extras]
    if FEATURE_MPI not in features:
        lines.append(f"{at}: no feature '{FEATURE_MPI}'")
    unknown = set(extras.get(Extras.METHOD_ENV_VARS, {})) - set(METHODS) - {"default"}
    if unknown:
        lines.append(f"{at}: extras['{Extras.METHOD_ENV_VARS}'] names no method: {', '.join(sorted(unknown))}")
    if {FEATURE_NCCL, FEATURE_RCCL} & set(features) and Extras.CCL_NET_CHECK not in extras:
        lines.append(f"{at}: ccl without extras['{Extras.CCL_NET_CHECK}'] (the network plugin's proof)")
    return lines


def test_every_site_gives_every_required_key(monkeypatch):
    config = load_config(monkeypatch)
    sites = [s["name"] for s in config["systems"] if is_site(s)]
    assert set(sites) >= {"alps", "leonardo", "lumi"}
    lines = missing_keys(config, node_class_partitions())
    assert not lines, "\n".join(lines)
    # the account: the placeholder a dry run writes without SBATCH_ACCOUNT
    for system in config["systems"]:
        if is_site(system):
            assert all(f"--account={ACCOUNT_UNSET}" in p["access"] for p in system["partitions"])


@pytest.mark.parametrize("drop,line", [
    (lambda c: c["systems"][0]["partitions"][0]["extras"].pop(Extras.LINK_BANDWIDTH),
     f"alps:gh200: no extras['{Extras.LINK_BANDWIDTH}']"),
    (lambda c: c["systems"][0]["partitions"][0].pop("launcher"), "alps:gh200: no 'launcher'"),
    (lambda c: c["systems"][0]["partitions"][0].__setitem__("access", ["--partition=normal"]),
     "alps:gh200: access has no --account= (site.siteconf.slurm_access)"),
    (lambda c: c["environments"][0]["extras"].pop(Extras.METHOD_ENV_VARS),
     f"alps:gh200+prgenv-gnu: no extras['{Extras.METHOD_ENV_VARS}']"),
])
def test_a_missing_key_is_one_line_naming_it(monkeypatch, drop, line):
    config = copy.deepcopy(load_config(monkeypatch))
    config["systems"].sort(key=lambda s: s["name"] != "alps")
    config["environments"].sort(key=lambda e: e["name"] != "prgenv-gnu")
    drop(config)
    assert missing_keys(config, node_class_partitions()) == [line]


def test_a_missing_node_class_and_references_file(monkeypatch, tmp_path):
    config = load_config(monkeypatch)
    classes = {k: v for k, v in node_class_partitions().items() if k != "lumi:standard-g"}
    assert missing_keys(config, classes) == ["lumi:standard-g: no node class (config/nodeclasses.py PARTITIONS)"]
    config = copy.deepcopy(config)
    config["systems"] = [s for s in config["systems"] if s["name"] == "alps"]
    assert missing_keys(config, classes, tmp_path) == ["alps: no references file config/references/alps.yaml"]


def test_a_new_site_is_its_files(tmp_path):
    """The site recipe in a scratch tree: a fourth site, config/systems/<name>.py copied from
    Leonardo's with its name changed, is loaded by config/settings.py and checked key by key;
    without its other files (recipe page, references, node class) it is one line each, with
    them nothing is missing, and a dry run on it writes its job script."""
    import shutil
    import subprocess
    import sys

    from reframe_helpers import CONFIG, clean_env, reframe_cmd, report_cases
    for folder in ("config", "checks"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "docs" / "sites").mkdir(parents=True)
    leo = (REPO / "config" / "systems" / "leonardo.py").read_text()
    (tmp_path / "config" / "systems" / "newsite.py").write_text(
        leo.replace('"leonardo"', '"newsite"').replace("leonardo:", "newsite:")
        .replace('r"login\\d+\\.leonardo", r"lrdn\\d+"', 'r"nslogin\\d+"'))

    def check():
        env = clean_env(PYTHONPATH=str(REPO / "src"), RFM_RESOLVE_MODULE_CONFLICTS="n")
        probe = ("import json, runpy; c = runpy.run_path('config/settings.py')['site_configuration']; "
                 "p = runpy.run_path('config/nodeclasses.py')['PARTITIONS']; print(json.dumps([c, sorted(p)]))")
        out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        config, classes = json.loads(out.stdout)
        assert "newsite" in [s["name"] for s in config["systems"]]
        config["systems"] = [s for s in config["systems"] if s["name"] == "newsite"]
        return missing_keys(config, dict.fromkeys(classes), tmp_path / "config" / "references", tmp_path)

    assert check() == []  # no recipe page: a system, not a site, and it has what every system needs
    (tmp_path / "docs" / "sites" / "newsite.md").write_text("# newsite\n")
    assert check() == ["newsite: no references file config/references/newsite.yaml",
                       "newsite:booster: no node class (config/nodeclasses.py PARTITIONS)"]
    shutil.copy(REPO / "config" / "references" / "leonardo.yaml", tmp_path / "config" / "references" / "newsite.yaml")
    classes = tmp_path / "config" / "nodeclasses.py"
    classes.write_text(classes.read_text().replace('"leonardo:booster": "a100-sxm4-64gb-x4",',
                                                   '"leonardo:booster": "a100-sxm4-64gb-x4",\n'
                                                   '    "newsite:booster": "a100-sxm4-64gb-x4",'))
    assert check() == []
    prefix = tmp_path / "rfm"
    cmd = reframe_cmd("--system", "newsite", "-c", "checks/pingpong.py", "-n", "%method=host",
                      "--dry-run", "--prefix", prefix, "--report-file", prefix / "report.json")
    cmd[cmd.index(str(CONFIG))] = str(tmp_path / "config" / "settings.py")
    run = subprocess.run(cmd, cwd=tmp_path, env=clean_env(PYTHONPATH=str(REPO / "src"), SBATCH_ACCOUNT="x",
                                                     GPUCOMM_PYTHON="/venv/bin/python"),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    script = (Path(report_cases(prefix / "report.json")[0]["stagedir"]) / "rfm_job.sh").read_text()
    assert "#SBATCH --partition=boost_usr_prod" in script and "-m gpucomm pingpong --method host" in script
