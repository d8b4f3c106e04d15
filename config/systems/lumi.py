"""LUMI-G, partition standard-g (the paper's "LUMI").

Node: 1 AMD EPYC 7A53 (64 cores in 8 CCDs, first core of each reserved), 4 MI250X = 8 GCDs
joined by Infinity Fabric (GCD pairs 0-1: 200 GB/s, others 50 or 100 GB/s per direction,
paper Fig. 4), 4 Slingshot-11 NICs (25 GB/s each).  standard-g allocates whole nodes.

    SBATCH_ACCOUNT=project_<id> GPUCOMM_PYTHON=/path/to/venv/bin/python \
        reframe -C config/settings.py --system lumi -c checks/ -r
    SBATCH_PARTITION=small-g ...   # up to 4 nodes, still whole nodes (--exclusive below)

The payload runs in a venv on cray-python with mpi4py built by the Cray wrappers and CuPy built
for ROCm (docs/sites/lumi.md).  Snapshots cited (docs/sites/SOURCES.md):

* lumi-ug   = Lumi-supercomputer/lumi-userguide@6c3a26c0fc8f2174e1dde45adb75def88d8010a4
  (branch production, source of docs.lumi-supercomputer.eu; Oct 2024, the newest stored)
* lumi-rfm  = Lumi-supercomputer/lumi-reframe-tests@a6d79840e324f6c09c8321c48b3781d6f73a6747
* lumi-eb   = Lumi-supercomputer/LUMI-EasyBuild-contrib (file@commit given where cited)
* blink     = DanieleDeSensi/blink@84316d998f69a534b0198c9164971fa6f26fec5a (branch sc24)
* blink-gpu = HicrestLaboratory/Blink-GPU@ca28ced238cf1fce377866c07193edf3075037cb (branch sc24)

Sources:
* Account: "The account option (--account=project_<id>) is mandatory":
  lumi-ug:docs/runjobs/scheduled-jobs/batch-job.md (site.siteconf.slurm_access).
* Partitions: standard-g whole nodes, 2 days, <= 1024 nodes, 210 jobs (200 running); small-g
  <= 4 nodes, 3 days, 210 (200); dev-g <= 32 nodes, 3 h, 2 jobs (1 running) (both allocatable by
  resources, shared unless --exclusive): lumi-ug:docs/runjobs/scheduled-jobs/partitions.md.
  GPU/CPU binding "only applies if you have a full-node allocation ... For other partitions, it
  will apply if you use the --exclusive sbatch directive": lumi-ug:docs/runjobs/scheduled-jobs/lumig-job.md.
* select_gpu (ROCR_VISIBLE_DEVICES=$SLURM_LOCALID), 56 usable cores, map_cpu:49,57,17,25,1,9,33,41
  and the CCD masks: lumi-ug lumig-job.md, distribution-binding.md; the 0xfe... masks as in
  lumi-rfm:checks/microbenchmarks/gpu/rccl_test.py (@a2c7b363268f201332cc8c8796d7ba6c1126dc78).
* RCCL over Slingshot: plugin module aws-ofi-nccl/1.18.0-rocm, NCCL_SOCKET_IFNAME=hsn0..3,
  NCCL_NET_GDR_LEVEL=3, NCCL_ENABLE_DMABUF_SUPPORT=1: lumi-rfm rccl_test.py (same commit);
  CXI_FORK_SAFE*, FI_CXI_DISABLE_CQ_HUGETLB and the "NET/OFI Selected Provider is cxi" log
  line: lumi-ug:docs/software/packages/pytorch.md.
* MPICH_GPU_SUPPORT_ENABLED=1 needs the GTL linked (craype-accel-amd-gfx90a): lumi-ug:
  docs/development/compiling/prgenv.md; mpi4py from cray-python made GPU-aware with
  LD_PRELOAD of libmpi_gtl_hsa.so: lumi-rfm:checks/apps/python/check_mpi4py.py
  (@4a2429a3c97f0060fe77a3f1842865452cf3752e).  MPICH_OFI_NIC_POLICY=GPU: HPE Cray MPICH man
  page (intro_mpi).  HSA_ENABLE_SDMA=0 (blit kernels instead of SDMA engines): every paper
  environment on LUMI (blink-gpu:Makefile.LUMI).
* Link limits: paper_reference.md, "Nominal bandwidths drawn in the paper's plots".
* Network: 24 dragonfly groups of 124 nodes, 32 switches per group, each node's 4 NICs on
  different switches (lumi-ug:docs/hardware/network.md); placement as on Alps: proven by
  SLURM_TOPOLOGY_ADDR or the job's `scontrol show topology`, whether LUMI's Slurm has the tree
  plugin is UNCONFIRMED.
"""

import os

from gpucomm.constants import Extras
from gpucomm.site.siteconf import bind_wrapper, env_list, gpu_binding, gpu_resource, python, slurm_access


def _str(variables):
    """{name: value} with every value a string, as the job script writes it."""
    return {name: str(value) for name, value in variables.items()}


#: CPU masks for tasks 0..7 (LUMI docs): cores 49-55, 57-63, 17-23, 25-31, 1-7, 9-15, 33-39,
#: 41-47, i.e. the CCD attached to GCD 0..7 (lumi-ug distribution-binding.md; lumi-rfm
#: rccl_test.py uses the same 0xfe... masks)
CPU_MASKS = ["fe000000000000", "fe00000000000000", "fe0000", "fe000000",
             "fe", "fe00", "fe00000000", "fe0000000000"]

#: max nodes of one job, and max jobs a user may have submitted, per partition
#: (lumi-ug:docs/runjobs/scheduled-jobs/partitions.md: "Max jobs 2 (1 running)" on dev-g, so
#: ReFrame keeps 2 submitted there, as sbatch refuses a third); every check's time limit is
#: below dev-g's 3 h
MAX_NODES = {"standard-g": 1024, "small-g": 4, "dev-g": 32}
MAX_JOBS = {"dev-g": 2}
#: the longest job per partition (lumi-userguide:docs/runjobs/scheduled-jobs/partitions.md at 0ff8fc9,
#: "Max walltime": standard-g 2 days, small-g 3 days, dev-g 3 hours)
MAX_TIME = {"standard-g": "48h", "small-g": "72h", "dev-g": "3h"}
PARTITION = os.environ.get("SBATCH_PARTITION") or "standard-g"

#: the LUMI software stack; LUMI/25.03 is INFERRED (lumi-eb has cpeGNU-25.03 easyconfigs for
#: CuPy 13.5.1 and others), not read from a LUMI page: override with GPUCOMM_LUMI_STACK
STACK = os.environ.get("GPUCOMM_LUMI_STACK", "LUMI/25.03")
#: RCCL's libfabric plugin module.  Default aws-ofi-nccl/1.18.0-rocm, what LUMI's own RCCL check
#: loads today (lumi-rfm rccl_test.py @a2c7b363, 2026-02-16; built from
#: lumi-eb:easybuild/easyconfigs/a/aws-ofi-nccl/aws-ofi-nccl-1.18.0-rocm.eb
#: @056571330212180272d411028093a18066ebd9c4).  Earlier names: aws-ofi-rccl/cxi-rocm-6.2.2
#: (2025), aws-ofi-rccl (LUMI/22.12, the paper's, from the project's own EasyBuild:
#: blink-gpu:Makefile.LUMI).  Whether it is installed centrally or with EasyBuild-user is
#: UNCONFIRMED.  Override with GPUCOMM_LUMI_CCL_PLUGIN ('' = load none).
CCL_PLUGIN = os.environ.get("GPUCOMM_LUMI_CCL_PLUGIN", "aws-ofi-nccl/1.18.0-rocm")

#: RCCL over Slingshot through the plugin (lumi-rfm rccl_test.py; lumi-ug pytorch.md), GPU-aware
#: MPI off (the paper's RCCL runs unset it: blink-gpu:Makefile.LUMI)
RCCL_ENV = _str({
    "MPICH_GPU_SUPPORT_ENABLED": 0,
    "NCCL_SOCKET_IFNAME": "hsn0,hsn1,hsn2,hsn3",
    "NCCL_NET_GDR_LEVEL": 3,
    "NCCL_ENABLE_DMABUF_SUPPORT": 1,
    "CXI_FORK_SAFE": 1,
    "CXI_FORK_SAFE_HP": 1,
    "FI_CXI_DISABLE_CQ_HUGETLB": 1,
    "NCCL_IGNORE_CPU_AFFINITY": 1,   # paper configuration: blink-gpu:Makefile.LUMI
})
#: Cray MPICH on device buffers (lumi-ug prgenv.md; lumig-job.md sets it only for GPU-aware runs),
#: with the GTL preloaded as LUMI's own mpi4py check does for cray-python's mpi4py, which is
#: not linked to it (lumi-rfm:checks/apps/python/check_mpi4py.py @4a2429a3: LD_PRELOAD=
#: ${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so with MPICH_GPU_SUPPORT_ENABLED=1): the venv of
#: docs/sites/lumi.md sees that mpi4py (--system-site-packages); an mpi4py the Cray wrappers
#: linked to the GTL loads the same library
GPU_AWARE_ENV = _str({"MPICH_GPU_SUPPORT_ENABLED": 1,
                      "LD_PRELOAD": "${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so"})
#: host buffers: GPU support off, so an mpi4py without the GTL still starts
HOST_ENV = _str({"MPICH_GPU_SUPPORT_ENABLED": 0})

#: the paper's per-method tuning on LUMI: {method: [{env, ops, single_node}]}, applied by the
#: paper mode (-S paper_tuning=y, rfm.mixins.SiteOptions.paper_entries) to the checks of those
#: operations (every operation if none named), on one node only where single_node says so
PAPER_METHOD_ENV = {
    "ccl": [
        # paper configuration: every RCCL environment of blink-gpu:Makefile.LUMI (the
        # Nccl, Nccl_new and Nccl_Singularity modules files: FI_CXI_ATS=0,
        # FI_CXI_DEFAULT_CQ_SIZE=131072, NCCL_BUFFSIZE=33554432), for every RCCL run
        {"env": _str({"NCCL_BUFFSIZE": 33554432, "FI_CXI_ATS": 0,
                      "FI_CXI_DEFAULT_CQ_SIZE": 131072})},
        # paper configuration: blink-gpu:Makefile.LUMI ("Rccl 5.7.1.1" = Nccl_new modules), used
        # for the intra-node ccl ping-pong (blink:sbatch/lumi/intra-node.sbatch:
        # gpubench_pp_nccl after load_Nccl_new_modules.sh); with the authors' own RCCL 5.7.1.1
        {"env": _str({"NCCL_NCHANNELS_PER_PEER": 32}), "ops": ["pingpong"], "single_node": True},
    ],
    # paper configuration: blink:sbatch/lumi/intra-node.sbatch (MPICH_GPU_ALLREDUCE_BLK_SIZE=
    # 134217728 for the whole intra-node job, i.e. the GPU-aware all-reduce)
    "gpu-aware-mpi": [{"env": _str({"MPICH_GPU_ALLREDUCE_BLK_SIZE": 134217728}),
                       "ops": ["allreduce"], "single_node": True}],
}


def _method_env():
    """method_env_vars of the environment, per method (the health sweep launches each group of
    methods with equal variables separately); ipc-copy's MPI messages are host buffers."""
    return {"host": HOST_ENV, "staging": HOST_ENV, "gpu-aware-mpi": GPU_AWARE_ENV,
            "ccl": RCCL_ENV, "ipc-copy": HOST_ENV}


site_configuration = {
    "systems": [{
        "name": "lumi",
        "descr": "LUMI-G (CSC, EuroHPC)",
        "hostnames": [r"uan\d+", r"lumi"],
        "modules_system": "lmod",
        "partitions": [{
            "name": "standard-g",
            "descr": "4 x MI250X (8 GCDs) per node, Infinity Fabric, 4 x Slingshot-11",
            "scheduler": "slurm",
            "launcher": "srun",
            # --exclusive: a no-op on standard-g (whole nodes), and what makes small-g/dev-g
            # (SBATCH_PARTITION=small-g) whole nodes, which the binding needs (lumi-ug lumig-job.md)
            "access": slurm_access("standard-g", "--exclusive", account_required=True),
            "sched_options": {"use_nodes_option": True},
            "environs": ["cray-rccl"],
            "max_jobs": MAX_JOBS.get(PARTITION, 100),
            "time_limit": "10m",
            "features": ["gpu", "amdgpu", "remote"],
            "devices": [{"type": "gpu", "arch": "gfx90a", "num_devices": 8}],
            "resources": [gpu_resource("--gpus-per-node={num_gpus_per_node}")],
            "extras": {
                # guard (GB/s): the fastest GCD pair, 0-1 (Figs. 3/4: 1600 Gb/s = 200 GB/s) ...
                Extras.LINK_BANDWIDTH: 200,
                # ... and GCD 0 to all 7 peers, the sum of Fig. 4's bar tops (4800 Gb/s) ...
                Extras.GPU_BANDWIDTH: 600,
                # ... and the node's 4 NICs, a multi ping-pong's bound (Fig. 7: 800 Gb/s)
                Extras.NETWORK_BANDWIDTH: 100,
                # 4 Slingshot-11 NICs per node, one per MI250X (lumi-ug:docs/hardware/network.md), cxi0..
                # cxi3 (the cxi driver's names: UNCONFIRMED on LUMI).  gpus: the two GCDs of the MI250X
                # each NIC hangs off (rfm.nicpath): lumi-ug:docs/assets/images/lumig-node-overview.svg
                # (docs/hardware/lumig.md) draws NIC 0 on GCDs 0-1, NIC 1 on 2-3, NIC 2 on 4-5, NIC 3 on
                # 6-7; UNCONFIRMED that the drawing's NIC k is cxik
                Extras.NICS: {"fabric": "cxi", "devices": ["cxi0", "cxi1", "cxi2", "cxi3"],
                              "gpus": [[0, 1], [2, 3], [4, 5], [6, 7]]},
                # the largest job of the partition in use (lumi-ug partitions.md)
                Extras.MAX_NODES: MAX_NODES.get(PARTITION),
                Extras.MAX_TIME: MAX_TIME.get(PARTITION),
                # GCD pairs by nominal Infinity Fabric bandwidth (Gb/s per direction), the
                # pair-matrix check's reference classes (gpucomm.pairs.pair_class).  Sourced:
                # the two GCDs of one MI250X, 1600 (LUMI docs: in-package IF 400 GB/s
                # bidirectional; paper Fig. 4: 0-1 = 1600); from GCD 0, Fig. 4's bar tops 0-6,
                # 0-7 = 800 and 0-2..0-5 = 400.  ASSUMED, not checked on a node: the other
                # cross-module pairs by the same module symmetry (modules 0-3 and 1-2 joined by
                # dual links, the rest single); verify with `rocm-smi --showtopo` on LUMI-G.
                Extras.PAIR_CLASSES: {"1600": ["0-1", "2-3", "4-5", "6-7"],
                                      "800": ["0-6", "0-7", "1-6", "1-7", "2-4", "2-5", "3-4", "3-5"],
                                      "default": "400"},
                # paper configuration: the two-node multi ping-pong's layout, which
                # MultiPingPongCheck (pairs=all) uses instead of every GCD (checks/internode.py).
                # blink:sbatch/lumi/two-nodes.sbatch (sc24 and main):
                # PPN_GPU=4 for pp-nccl AND pp-cudaaware, PPN_CPU=4 for pp-mpi, GCD order
                # USER_HIP_GPU_MAP="1,3,5,7,0,2,4,6", pinning map_cpu:57,25,9,41,49,17,1,33, so
                # 4 ranks on GCDs 1,3,5,7 with cores 57,25,9,41.  (Until 2024-03-31, commit
                # a3504513, that file had PPN_GPU=8 for both GPU methods.)
                Extras.MULTI_PINGPONG: {
                    "ranks_per_node": {"host": 4, "staging": 4, "gpu-aware-mpi": 4, "ccl": 4,
                                       "ipc-copy": None},
                    "gcds": [1, 3, 5, 7],
                    "cpus": [57, 25, 9, 41],
                },
                # one switch through Slurm (a LUMI-G node's 4 NICs sit on 4 switches of its
                # group: Slurm's leaf is what "switch" means here); others: -S nodelist=...
                Extras.PLACEMENT_OPTIONS: {"same-switch": ["--switches=1"]},
                # the noise study (checks/noise.py, --mode noise only): victim 2 nodes + aggressor 2
                # nodes in one job; Slurm can put all four on one leaf switch (--switches=1); the
                # other layouts need given nodes (-S victim_nodelist=... -S aggressor_nodelist=...)
                Extras.NOISE: {"aggressor_nodes": 2, "layouts": {"same-switch": {"job": ["--switches=1"]}}},
                Extras.LAUNCHER_OPTIONS: ["--cpu-bind=mask_cpu:" + ",".join(CPU_MASKS),
                                          bind_wrapper(__file__)],
                Extras.METHOD_ENV_VARS: gpu_binding("ROCR_VISIBLE_DEVICES", range(8)),
            },
        }],
    }],
    "environments": [{
        "name": "cray-rccl",
        "target_systems": ["lumi"],
        # craype-accel-amd-gfx90a: the wrappers link the GTL (lumi-ug prgenv.md), which the
        # venv's mpi4py needs (docs/sites/lumi.md); cray-python: the venv's base interpreter
        "modules": [STACK, "partition/G", "PrgEnv-gnu", "craype-accel-amd-gfx90a", "rocm",
                    "cray-python"] + ([CCL_PLUGIN] if CCL_PLUGIN else []),
        "features": ["mpi", "gpu-aware-mpi", "cupy", "rccl"],
        "env_vars": env_list({
            "MPICH_OFI_NIC_POLICY": "GPU",
            "HSA_ENABLE_SDMA": 0,   # paper configuration: blink-gpu:Makefile.LUMI, every method
        }),
        "extras": {
            # the payload's interpreter: the venv of docs/sites/lumi.md (GPUCOMM_PYTHON)
            Extras.PYTHON: python(required=True),
            Extras.RECIPE: "docs/sites/lumi.md",
            Extras.METHOD_ENV_VARS: _method_env(),
            Extras.PAPER_METHOD_ENV_VARS: PAPER_METHOD_ENV,
            Extras.CCL_PLUGIN_MODULE: CCL_PLUGIN,
            # with NCCL_DEBUG=INFO, the plugin over cxi logs "NCCL INFO NET/OFI Selected Provider
            # is cxi" (lumi-ug pytorch.md; CSCS's xccl check greps the same); the socket
            # fallback logs "Using network Socket" (NCCL/RCCL src/init.cc "Using network %s").
            # library: what the preflight dlopens before the launch, the name RCCL opens
            # (ROCm/rccl src/plugin/plugin_open.cc: prefix "librccl-net"), which the plugin
            # module installs (lumi-eb aws-ofi-nccl-1.18.0-rocm.eb sanity_check_paths:
            # lib/librccl-net.so, lib/librccl-net-ofi.so)
            Extras.CCL_NET_CHECK: {"env": {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"},
                              "pattern": r"NET/OFI Selected [pP]rovider is cxi",
                              "fallback_pattern": r"NCCL INFO Using network Socket",
                              "library": "librccl-net.so" if CCL_PLUGIN else ""},
        },
    }],
    # ReFrame loads the modules into itself to resolve conflicts unless this is off, which needs
    # Lmod where the script is generated; off, a dry-run works anywhere and writes the same script
    # (on the site Lmod itself swaps modules of one family).  config/settings.py merges every
    # system file's "general" section.
    "general": [{"resolve_module_conflicts": False, "target_systems": ["lumi"]}],
}
