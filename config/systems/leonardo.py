"""CINECA Leonardo, Booster partition (the paper's "Leonardo").

Node: 1 Intel Xeon 8358 (32 cores, 2 sub-NUMA domains), 4 NVIDIA A100 64 GB SXM joined all-to-all
by NVLink3 (4 links = 100 GB/s per direction per GPU pair), 2 dual-port HDR100 InfiniBand NICs
(4 ports mlx5_0..mlx5_3, 12.5 GB/s each).  Nodes are shared between jobs unless --exclusive.

    SBATCH_ACCOUNT=<project> GPUCOMM_PYTHON=$WORK/gpucomm-venv/bin/python \
        reframe -C config/settings.py --system leonardo -c checks/ -r

The payload runs in a venv built on the site's Python, CUDA-aware Open MPI and NCCL modules
(docs/sites/leonardo.md); the system python3 is 3.6, too old for gpucomm (requires-python >= 3.9).
Snapshots cited (docs/sites/SOURCES.md):

* blink     = DanieleDeSensi/blink@84316d998f69a534b0198c9164971fa6f26fec5a (branch sc24)
* blink-gpu = HicrestLaboratory/Blink-GPU@ca28ced238cf1fce377866c07193edf3075037cb (branch sc24)
* qos-copy  = jeevesh415/OpenThoughts-Agent@f008f416b8ad12c27c42603a4f48d5041032e893:
  hpc/docs/leonardo.md, a user's copy of CINECA's "Booster Section" QOS table (THIRD-PARTY:
  the table on docs.hpc.cineca.it/hpc/leonardo.html could not be read here)

Sources:
* Account: every batch job is charged to a project account (CINECA user guide, "Budgets and
  Accounting": a username "must be associated with one or more active projects (Accounts)");
  every Leonardo job of the paper sets one (blink:sbatch/leonardo/*.sbatch, --account=...):
  required here (site.siteconf.slurm_access); UNCONFIRMED whether CINECA refuses a job without.
* Booster partition boost_usr_prod, --gres=gpu:N, srun as the launcher, node sharing:
  CINECA user guide, Leonardo "Booster Section" (wiki.u-gov.it/confluence/display/SCAIUS/
  Booster+Section, now docs.hpc.cineca.it/hpc/leonardo.html).
* QOS by job size (normal <= 64 nodes 24 h; boost_qos_bprod 65..256 nodes 24 h; boost_qos_dbg
  <= 2 nodes 30 min; boost_qos_lprod <= 3 nodes 4 days): qos-copy (THIRD-PARTY, see above).
* The paper's modules (nvhpc/23.1, openmpi/4.1.4--nvhpc--23.1-cuda-11.8,
  nccl/2.14.3-1--gcc--11.3.0-cuda-11.8): blink-gpu:Makefile.LEONARDO; the job layout (4 tasks
  per node, --cpus-per-task=8, --gres=gpu:4, --exclusive): blink:sbatch/leonardo/*.sbatch,
  blink-gpu:sbatch/leonardo/scriptgenerator4leonardo.sh.
* One HDR port per rank (UCX_NET_DEVICES=mlx5_<local rank>:1): the paper's device list
  (BLINK_IB_DEVICES=mlx5_0#...#mlx5_3, blink:conf/leonardo.sh) in local-rank order.
* HCOLL off: the paper's Figs. 9/10 runs are the "hcoll0" ones (paper_reference.md,
  blink:sbatch/leonardo/many-nodes-coll.sbatch).
* InfiniBand service level: blink:conf/leonardo.sh (NCCL_IB_SL=1, UCX_IB_SL=1 unless set);
  blink:sbatch/leonardo/two-nodes.sbatch runs SL 0, many-nodes-coll/256-nodes-coll SL 1 and 0.
* Link limits: paper_reference.md, "Nominal bandwidths drawn in the paper's plots".
* Placement: --switches=1 (sbatch man page); Slurm's topology/tree sets SLURM_TOPOLOGY_ADDR in
  every task here, which the paper's authors read to tell the switch distance of two nodes
  (blink-gpu:sbatch/leonardo/scriptgenerator4leonardo.sh) and the payload records; the job's
  `scontrol show topology` of its nodes is the second record (rfm.mixins, site.placement).
"""

import os

from gpucomm.constants import Extras
from gpucomm.site.siteconf import bind_wrapper, env_list, gpu_binding, gpu_resource, python, slurm_access


def _str(variables):
    """{name: value} with every value a string, as the job script writes it."""
    return {name: str(value) for name, value in variables.items()}


#: the modules of the payload's environment, in load order, each versioned (a plain name loads
#: whatever the site's default is that day); override with GPUCOMM_LEONARDO_MODULES
#: (comma-separated).  THIRD-PARTY names, seen in 2024-26 Leonardo job scripts (no CINECA page
#: read): gcc/12.2.0, cuda/12.2, openmpi/4.1.6--gcc--12.2.0-cuda-12.2 (the CUDA-aware build),
#: nccl/2.22.3-1--gcc--12.2.0-cuda-12.2-spack0.22 (loaded with exactly these gcc, cuda and
#: openmpi modules in a user's Leonardo script, find_string id 58612750801; others load
#: nccl/2.19.3-1--gcc--12.2.0-cuda-12.1 with cuda/12.1), python/3.11.6--gcc--12.2.0 (the venv's
#: base interpreter; its libpython is needed at run time).  Check with `module spider openmpi
#: nccl python` on a login node.
MODULES = [m for m in os.environ.get(
    "GPUCOMM_LEONARDO_MODULES",
    "gcc/12.2.0,cuda/12.2,openmpi/4.1.6--gcc--12.2.0-cuda-12.2,"
    "nccl/2.22.3-1--gcc--12.2.0-cuda-12.2-spack0.22,python/3.11.6--gcc--12.2.0",
).split(",") if m]

#: the QOS a user chose for every job (SBATCH_QOS; else the checks pick one by node count,
#: extras['qos_by_nodes']) and its limits (qos-copy, THIRD-PARTY): the largest job, and how
#: many jobs to keep submitted where the QOS runs few (boost_qos_dbg: 2 nodes per user, so two
#: one-node jobs at a time).  Every check's time limit is below boost_qos_dbg's 30 min.
QOS = os.environ.get("SBATCH_QOS", "")
QOS_LIMITS = {"normal": {"max_nodes": 64}, "boost_qos_bprod": {"max_nodes": 256},
              "boost_qos_dbg": {"max_nodes": 2, "max_jobs": 2},
              "boost_qos_lprod": {"max_nodes": 3}}
#: the longest job of each QOS (qos-copy, THIRD-PARTY: normal and boost_qos_bprod 24 h,
#: boost_qos_dbg 30 min, boost_qos_lprod 4 days); without SBATCH_QOS the size rule's, 24 h
MAX_TIME = {"normal": "24h", "boost_qos_bprod": "24h", "boost_qos_dbg": "30m", "boost_qos_lprod": "96h"}

#: InfiniBand service level: off (the fabric's default) unless a check is given
#: -S service_level=N, which sets both variables below (partition extras['service_level_vars']);
#: the paper mode applies the paper's (extras['paper_service_levels']).  paper configuration:
#: blink:conf/leonardo.sh sets 1 by default; blink:sbatch/leonardo/two-nodes.sbatch ran its
#: two-node runs with SL 0, the collectives (many-nodes-coll.sbatch, 256-nodes-coll.sbatch)
#: with SL 1 and 0, of which the references take SL 1 at 2 nodes and SL 0 above
SERVICE_LEVEL_VARS = ["NCCL_IB_SL", "UCX_IB_SL"]

#: NCCL: nothing of its own (NCCL_IGNORE_CPU_AFFINITY=1 is the paper's Alps setting,
#: blink:conf/alps.sh; none of the paper's Leonardo files sets it: blink:conf/leonardo.sh,
#: blink:sbatch/leonardo/*, blink-gpu:Makefile.LEONARDO)
NCCL_ENV = {}
#: Open MPI over UCX on InfiniBand (host and device buffers alike): nothing per method
UCX_ENV = {}

site_configuration = {
    "systems": [{
        "name": "leonardo",
        "descr": "CINECA Leonardo Booster",
        "hostnames": [r"login\d+\.leonardo", r"lrdn\d+"],
        "modules_system": "lmod",
        "partitions": [{
            "name": "booster",
            "descr": "4 x A100 64 GB per node, NVLink3 all-to-all, 2 x dual-port HDR100",
            "scheduler": "slurm",
            "launcher": "srun",
            # whole nodes: a benchmark must not share NVLink, PCIe or NICs with other jobs (the
            # paper's runs too: --exclusive in blink:sbatch/leonardo/*.sbatch).  The QOS comes
            # from SBATCH_QOS until the checks apply extras['qos_by_nodes'] themselves
            "access": slurm_access("boost_usr_prod", "--exclusive", account_required=True),
            "sched_options": {"use_nodes_option": True},
            "environs": ["openmpi-nccl"],
            "max_jobs": QOS_LIMITS.get(QOS, {}).get("max_jobs", 100),
            "time_limit": "10m",
            "features": ["gpu", "nvgpu", "remote"],
            "devices": [{"type": "gpu", "arch": "sm_80", "num_devices": 4}],
            "resources": [gpu_resource("--gres=gpu:{num_gpus_per_node}")],
            "extras": {
                # guard (GB/s): GPU-pair link (Fig. 3: 800 Gb/s = 100 GB/s) ...
                Extras.LINK_BANDWIDTH: 100,
                # ... and a GPU's links to all 3 peers (Figs. 5/6: 2400 Gb/s = 300 GB/s) ...
                Extras.GPU_BANDWIDTH: 300,
                # ... and the node's 4 HDR100 ports, a multi ping-pong's bound (Fig. 7: 400 Gb/s)
                Extras.NETWORK_BANDWIDTH: 50,
                # the 4 HDR100 ports (the module docstring's mlx5_0..mlx5_3).  gpus: GPU i for mlx5_i,
                # the paper's rank order (blink:conf/leonardo.sh BLINK_IB_DEVICES, one port per local
                # rank); UNCONFIRMED that mlx5_i is GPU i's nearest (no CINECA page maps them: check
                # `nvidia-smi topo -m` on a node)
                Extras.NICS: {"fabric": "ib", "devices": ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"],
                              "gpus": [[0], [1], [2], [3]]},
                # QOS of boost_usr_prod by job size, as data: the first entry whose bound is >= the
                # job's node count; none past max_nodes (qos-copy, THIRD-PARTY: normal max 64
                # nodes 24 h, boost_qos_bprod min 65 max 256 nodes 24 h).  boost_qos_dbg (<= 2
                # nodes, 30 min) is a choice for quick runs (SBATCH_QOS=boost_qos_dbg), not a
                # size rule.  rfm.mixins.MultiNode writes --qos= by node count (SBATCH_QOS wins)
                # and skips a job above max_nodes (SBATCH_QOS's own limit where one is given,
                # QOS_LIMITS), saying so
                Extras.QOS_BY_NODES: [[64, "normal"], [256, "boost_qos_bprod"]],
                Extras.MAX_NODES: QOS_LIMITS.get(QOS, {}).get("max_nodes", 256),
                Extras.MAX_TIME: MAX_TIME.get(QOS, "24h"),
                # InfiniBand: -S service_level=N sets these (an error on other partitions)
                Extras.SERVICE_LEVEL_VARS: SERVICE_LEVEL_VARS,
                # one leaf switch through Slurm's topology/tree; other placements need given
                # nodes (-S nodelist=...): Slurm has no option for "apart"
                Extras.PLACEMENT_OPTIONS: {"same-switch": ["--switches=1"]},
                # the noise study (checks/noise.py, --mode noise only): victim 2 nodes + aggressor 2
                # nodes in one job; Slurm can put all four on one leaf switch (--switches=1); the
                # other layouts need given nodes (-S victim_nodelist=... -S aggressor_nodelist=...)
                Extras.NOISE: {"aggressor_nodes": 2, "layouts": {"same-switch": {"job": ["--switches=1"]}}},
                # 8 cores per task in block order: tasks 0,1 on cores 0-15, tasks 2,3 on 16-31
                # (--cpus-per-task=8: blink-gpu:sbatch/leonardo/scriptgenerator4leonardo.sh; the
                # paper's srun pinning was --cpu-bind=socket, blink:conf/leonardo.sh)
                Extras.LAUNCHER_OPTIONS: ["--cpus-per-task=8", "--cpu-bind=cores", bind_wrapper(__file__)],
                Extras.METHOD_ENV_VARS: gpu_binding(
                    "CUDA_VISIBLE_DEVICES", range(4),
                    UCX_NET_DEVICES=[f"mlx5_{i}:1" for i in range(4)]),
            },
        }],
    }],
    "environments": [{
        "name": "openmpi-nccl",
        "target_systems": ["leonardo"],
        # versioned, configurable (see MODULES): CUDA-aware Open MPI + UCX, NCCL, Python
        "modules": MODULES,
        "features": ["mpi", "gpu-aware-mpi", "cupy", "nccl"],
        "env_vars": env_list({
            "OMPI_MCA_pml": "ucx",
            "OMPI_MCA_coll_hcoll_enable": 0,   # paper configuration: the "hcoll0" runs
        }),
        "extras": {
            # the payload's interpreter: the venv of docs/sites/leonardo.md (GPUCOMM_PYTHON);
            # the system python3 (3.6) cannot run gpucomm
            Extras.PYTHON: python(required=True),
            Extras.RECIPE: "docs/sites/leonardo.md",
            # gpu-aware-mpi hands Open MPI device buffers: its preflight requires an Open MPI built
            # with CUDA (ompi_info --parsable --all: mpi_built_with_cuda_support, Open MPI's
            # documentation "How can I tell if Open MPI was built with CUDA support?"), so a
            # non-CUDA openmpi module ends the job in one line instead of after the launch
            Extras.MPI_CUDA: True,
            # per method (rfm.mixins.SiteOptions; the health sweep launches each group of
            # methods with equal variables separately)
            Extras.METHOD_ENV_VARS: {
                "host": UCX_ENV,
                "staging": UCX_ENV,
                "gpu-aware-mpi": UCX_ENV,
                "ccl": NCCL_ENV,
                "ipc-copy": UCX_ENV,
            },
            # paper configuration, applied by the paper mode (-S paper_tuning=y) between nodes
            # unless -S service_level is given: the SL of the runs the committed references are
            # (src/gpucomm/data/paper_reference.md, "Included"; blink:data/description.csv has
            # both SLs): Fig. 7 the two-node runs "same_switch_SL0" (blink:sbatch/leonardo/
            # two-nodes.sbatch loops SL 0); Figs. 9/10 "same_switch_SL1_hcoll0" at 2 nodes and
            # "SL0_hcoll0" at 4-256 (many-nodes-coll.sbatch, 256-nodes-coll.sbatch loop SL 1 0);
            # any other check conf/leonardo.sh's default, 1
            Extras.PAPER_SERVICE_LEVELS: {"two-node": 0, "scaling": [[2, 1], [256, 0]], "default": 1},
            # the log line that proves which network NCCL chose, with NCCL_DEBUG=INFO (NCCL
            # src/init.cc: INFO(NCCL_INIT, "Using network %s")); IB expected here
            Extras.CCL_NET_CHECK: {"env": {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"},
                                   "pattern": r"NCCL INFO Using network IB"},
        },
    }],
    # ReFrame loads the modules into itself to resolve conflicts unless this is off, which needs
    # Lmod where the script is generated; off, a dry-run works anywhere and writes the same script
    # (on the site Lmod itself swaps modules of one family).  config/settings.py merges every
    # system file's "general" section.
    "general": [{"resolve_module_conflicts": False, "target_systems": ["leonardo"]}],
}
