"""Every GPU's own data paths (checks/datapaths.py, rfm.datapaths): on a CPU partition a SKIP
with its reason; on every site, in health and acceptance, a job script with one rank per GPU,
each bound to its GPU and, by the site's own srun binding, to that GPU's cores (its NUMA node),
and the payload's sweep, NUMA choice and host-link guard.  The site scripts are the session's
shared dry runs of each mode (test_sites.mode_cases): no dry run of their own."""

import pytest

from reframe_helpers import DATAPATH_CHECKS, clean_env, job_script, reframe, report_cases
from test_sites import BIND, SITES, VENV_PYTHON, mode_cases

#: the node class's host link per direction (config/references/datapaths.yaml $nominal), the
#: payload's --max-bandwidth; None: unconfirmed, the payload's own detection
GUARD = {"alps": "450", "leonardo": "31.5", "lumi": None}
SWEEP = {"health": "268435456",
         "acceptance": "4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824"}


def test_cpu_partition_skips_with_the_reason(tmp_path):
    report = tmp_path / "report.json"
    out = reframe("-c", "checks/datapaths.py", "-r", "-S", "sizes=8,4K", "--prefix", tmp_path,
                  "--report-file", report, env=clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1))
    assert out.returncode == 0, out.stdout[-3000:]
    (case,) = report_cases(report)
    assert case["result"] == "skip", case
    assert "DataPathsCheck" in out.stdout and "[partition local:cpu lacks +gpu]" in out.stdout, out.stdout[-2000:]


@pytest.mark.parametrize("mode", sorted(SWEEP))
@pytest.mark.parametrize("system", sorted(SITES))
def test_site_script_binds_each_rank_to_its_gpu(tmp_path_factory, system, mode):
    site = SITES[system]
    cases = [c for c in mode_cases(tmp_path_factory, system, mode) if c["name"].split()[0] in DATAPATH_CHECKS]
    (case,) = cases
    assert case["result"] == "pass", case["fail_reason"]
    assert "no reference for DataPathsCheck" in case["descr"] and site.recipe in case["descr"]
    lines = job_script(case).splitlines()
    n = site.gpus
    assert f"#SBATCH --ntasks-per-node={n}" in lines and "#SBATCH --nodes=1" in lines
    assert f"#SBATCH {site.gpu_request.format(n)}" in lines
    assert f"export GPUCOMM_BIND_{site.visible}={','.join(map(str, range(n)))}" in lines
    if site.method_env.get("staging"):
        for var, value in site.method_env["staging"].items():
            assert f"export {var}={value}" in lines, var
    (srun,) = [ln for ln in lines if ln.startswith("srun ")]
    assert srun.startswith(" ".join(["srun", *site.srun, BIND, VENV_PYTHON, "-m gpucomm gpu-datapaths"]))
    assert f" --method staging --sizes {SWEEP[mode]} " in srun and srun.endswith(" --host-numa both")
    guard = GUARD[system]
    assert (f" --max-bandwidth {guard} " in srun) if guard else "--max-bandwidth" not in srun
    assert ("--validate-every 1 --validate-sizes 1048576" in srun) == (mode == "acceptance")
