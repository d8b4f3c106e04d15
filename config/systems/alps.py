"""CSCS Alps, GH200 nodes (the paper's "Alps"; today the vClusters Daint, Clariden, Santis).

Node: 4 GH200 (Grace CPU + H100 GPU, 72 cores each), every GPU pair joined by 6 NVLink4 links
(150 GB/s per direction), 4 Slingshot-11 NICs (25 GB/s each), one per GH200.

    SBATCH_ACCOUNT=g123 GPUCOMM_PYTHON=$SCRATCH/gpucomm-venv/bin/python \
        reframe -C config/settings.py --system alps -c checks/ -r

The payload runs in a venv built on top of the uenv (docs/sites/alps.md); point the config at its
interpreter with GPUCOMM_PYTHON (extras['python']).  Every site fact below carries its source; the
snapshots are listed in docs/sites/SOURCES.md:

* cscs-docs = eth-cscs/cscs-docs@80abed138e7cc52ebf6703b82ed02520ab9bf92f (docs.cscs.ch source)
* cscs-rfm  = eth-cscs/cscs-reframe-tests@2f813557625e1294b277a698338f82f398bea7b8
* blink     = DanieleDeSensi/blink@84316d998f69a534b0198c9164971fa6f26fec5a (branch sc24)

Sources:
* Slurm on GH200, accounts (--account names the project, which CSCS's own config always passes:
  cscs-rfm:config/systems/daint.py, access '--account={osgroup()}'; UNCONFIRMED whether a job
  without one is refused), partitions normal (default, 24 h, any node count) and debug (1-2
  nodes, 30 min in the page's sinfo example), one rank per GPU: cscs-docs:docs/running/slurm.md.
  The GPU request: --gpus-per-node on GH200 as in cscs-docs:docs/software/sciapps/lammps.md
  and cscs-rfm:config/systems/starlex.py; through ReFrame's '_rfm_gpu' resource as in
  cscs-rfm:config/cscs-ci.py.
* uenv through Slurm (--uenv, --view, image:mount): cscs-docs:docs/software/uenv/using.md;
  prgenv-gnu versions and the 12-month support policy (24.11 removed April 2026):
  cscs-docs:docs/software/prgenv/prgenv-gnu.md.
* Cray MPICH GPU support (GTL + MPICH_GPU_SUPPORT_ENABLED=1, the "GTL library is not linked"
  abort, =0 for host-only traffic): cscs-docs:docs/software/communication/cray-mpich.md.
* NCCL over Slingshot (aws-ofi-nccl in the default view, NCCL_NET, FI_CXI_*, GPU-aware MPI
  off with NCCL): cscs-docs:docs/software/communication/nccl.md and nccl_env_vars.
* --mpi=cray_shasta for Cray MPICH in a uenv: cscs-rfm:checks/mixins/uenv_slurm_mpi_options.py.
* CPU map 1,73,145,217 (one core of each Grace, next to its GPU): the paper's run
  configuration (blink:conf/alps.sh, BLINK_PINNING_FLAGS).
* NVSHMEM over Slingshot (the libfabric transport, provider cxi; CUDA VMM off because the
  libfabric transport does not support it): cscs-docs@1171ce66c70149544ac0413ca56aebfeb7ba77cf
  docs/software/communication/nvshmem.md (CSCS builds NVSHMEM 3.4.5 from source with
  NVSHMEM_LIBFABRIC_SUPPORT=1 in a container).  The payload bootstraps NVSHMEM from its own MPI
  communicator (unique id), so srun's --mpi=pmix of that page does not apply.  UNCONFIRMED: that
  the nvidia-nvshmem-cu13 wheel's libfabric transport loads the uenv's libfabric with cxi (the
  recipe, docs/sites/alps.md, says how to point GPUCOMM_NVSHMEM_HOME at a source build instead).
* Link limits: paper_reference.md, "Nominal bandwidths drawn in the paper's plots".
* Placement: one switch with Slurm's --switches=1 (sbatch man page; CSCS's own config has a
  '--switches={num_switches}' resource: cscs-rfm:config/systems/daint.py).  The proof: the
  tasks' SLURM_TOPOLOGY_ADDR where Slurm sets it, else the job's `scontrol show topology` of its
  nodes (scontrol(1): the switches that connect them all, each with its level; rfm.mixins,
  site.placement), both Slurm's topology/tree plugin's.  Alps runs it: CSCS's own switch
  placement helper parses `scontrol show topology` (SwitchName=... Level=0 ... Nodes=...) of
  Alps' partitions (cscs-rfm pull request #624 @41ea4293d4248c9b033b791400dd3e857b7b7468,
  checks/mixins/switch_topology.py, used by checks/containers/container_engine/omb_mbw_mr.py on
  '+ce +nvgpu'; not merged into main 2f813557).  The node's xname (cscs-docs:docs/alps/
  hardware.md "Node xname" x<cabinet>c<chassis>s<slot>b<board>n<node>) is recorded, but no CSCS
  page maps it to switches or groups.  Different switch / group as the node pairs of the paper's runs
  (blink:sbatch/alps/two-nodes{,-diff-switch,-diff-group}.sbatch); -S nodelist=... overrides.
"""

import os

from gpucomm.constants import NO_MULTICAST_ENV, PAPER_METHOD, Extras
from gpucomm.site.siteconf import bind_wrapper, env_list, gpu_binding, gpu_resource, python, slurm_access


def _str(variables):
    """{name: value} with every value a string, as the job script writes it."""
    return {name: str(value) for name, value in variables.items()}


#: the uenv providing Cray MPICH (with the CUDA GTL), CUDA, NCCL and aws-ofi-nccl.  Default the
#: newest listed, prgenv-gnu/26.3:v1 (CUDA 13.1.1, cray-mpich 9.1.0, nccl 2.29.2-1, aws-ofi-nccl
#: 1.17.2, libfabric 2.4.0, python 3.14.3; its packages listed "in v1"; then cupy-cuda13x and
#: nvidia-nvshmem-cu13, whose cp314 aarch64 wheels PyPI has: cupy_cuda13x-14.2.0-cp314-cp314-
#: manylinux2014_aarch64.whl): cscs-docs:docs/software/prgenv/prgenv-gnu.md, which also lists 25.11
#: (CUDA 12.9) and 25.6 and says 24.11 was removed in April 2026.  A newer tag than v1 is
#: UNCONFIRMED: check `uenv image find prgenv-gnu`.  Override with GPUCOMM_ALPS_UENV (e.g.
#: prgenv-gnu/25.11:v1 for CUDA 12); the venv must be rebuilt for another uenv (cscs-docs:
#: docs/build-install/python.md: "The virtual environment is specific to a particular uenv").
UENV = os.environ.get("GPUCOMM_ALPS_UENV", "prgenv-gnu/26.3:v1")
#: the uenv's default view where the job runs (cscs-docs:docs/software/uenv/using.md)
VIEW = "/user-environment/env/default"

#: the Slurm partition (SBATCH_PARTITION, default normal) and the limits of the small one, so that
#: a job it would refuse is skipped with the reason instead: debug takes jobs of 1-2 nodes, 30 min
#: (cscs-docs:docs/running/slurm.md, the sinfo example; per vCluster the limits differ: check
#: `scontrol show partition=debug`).  Every check's time limit is below 30 min (the longest, a
#: scaling check at 2 nodes: 10 min 4 s)
PARTITION = os.environ.get("SBATCH_PARTITION") or "normal"
MAX_NODES = {"debug": 2}
#: the longest job per partition (rfm.plan refuses an acceptance over it before submitting): debug
#: 30 min (above); normal 24 h (cscs-docs:docs/running/slurm.md at 02609e6, "Normal partition": "The
#: maximum time is usually set to 24 hours", its sinfo example 1-00:00:00; per vCluster `sinfo -p normal`)
MAX_TIME = {"debug": "30m", "normal": "24h"}

#: optional squashfs image of the payload venv, "IMAGE:MOUNTPOINT", mounted next to the uenv
#: (cscs-docs:docs/guides/storage.md "Squash Python virtual environments with uenv":
#: --uenv=prgenv-gnu/...,$PWD/py_venv.squashfs:<venv path>); then GPUCOMM_PYTHON=<mountpoint>/bin/python
VENV_IMAGE = os.environ.get("GPUCOMM_ALPS_VENV_IMAGE", "")

#: NCCL over Slingshot, "should always be set ... when using NCCL with uenv":
#: cscs-docs:docs/software/communication/nccl_env_vars (last change 2025-11-03: TX size 16384).
#: GPU-aware MPI off for NCCL ("can easily lead to deadlocks ... explicitly set
#: MPICH_GPU_SUPPORT_ENABLED=0 ... may be set to 1 by default on some Alps clusters"):
#: cscs-docs:docs/software/communication/nccl.md.  NCCL_IGNORE_CPU_AFFINITY: blink:conf/alps.sh.
#: The hang workaround (eager messages off: cscs-docs nccl.md "NCCL watchdog timeout or hanging
#: process"), which CSCS's own NCCL check sets for every uenv run ("found to help avoid hangs":
#: cscs-rfm:checks/microbenchmarks/xccl/xccl_tests.py @29c3905a, _set_xccl_uenv_env_vars), and
#: NCCL_NCHANNELS_PER_NET_PEER=4 ("a good compromise to improve point-to-point performance
#: without affecting collectives performance": nccl.md; the xccl check sets it for sendrecv).
NCCL_ENV = _str({
    "MPICH_GPU_SUPPORT_ENABLED": 0,
    "NCCL_NET": '"AWS Libfabric"',   # fail if the plugin is missing, no silent TCP fallback
    "NCCL_NET_GDR_LEVEL": "PHB",
    "NCCL_CROSS_NIC": 1,
    "NCCL_PROTO": "^LL128",
    "FI_CXI_DEFAULT_CQ_SIZE": 131072,
    "FI_CXI_DEFAULT_TX_SIZE": 16384,
    "FI_CXI_DISABLE_HOST_REGISTER": 1,
    "FI_CXI_RX_MATCH_MODE": "software",
    "FI_MR_CACHE_MONITOR": "userfaultfd",
    "NCCL_IGNORE_CPU_AFFINITY": 1,   # paper configuration: blink:conf/alps.sh
    "FI_CXI_RDZV_GET_MIN": 0,
    "FI_CXI_RDZV_THRESHOLD": 0,
    "FI_CXI_RDZV_EAGER_SIZE": 0,
    "NCCL_NCHANNELS_PER_NET_PEER": 4,
})
#: the paper's Cray MPICH settings for every run (blink:conf/alps.sh: MPICH_SMP_SINGLE_COPY_MODE=
#: CMA, MPICH_MALLOC_FALLBACK=1), applied by the paper mode (-S paper_tuning=y) to the methods the
#: paper measured (rfm.mixins.SiteOptions.paper_entries)
PAPER_ENV = _str({"MPICH_SMP_SINGLE_COPY_MODE": "CMA", "MPICH_MALLOC_FALLBACK": 1})
#: Cray MPICH on device buffers: GTL linked (automatic in the uenv's cray-mpich) and this set
#: (cscs-docs:docs/software/communication/cray-mpich.md "GPU-aware MPI")
GPU_AWARE_ENV = _str({"MPICH_GPU_SUPPORT_ENABLED": 1})
#: host buffers only (host, staging, and ipc-copy's handle exchange): GPU support off, which
#: also skips the slow cuPointerGetAttribute check of NVIDIA driver >= 580 (cscs-docs:
#: cray-mpich.md "Slow host buffer communication with Nvidia driver version 590 and later")
HOST_ENV = _str({"MPICH_GPU_SUPPORT_ENABLED": 0})
#: NVSHMEM between nodes: its libfabric transport over the cxi provider, CUDA VMM off (the
#: libfabric transport does not support it): cscs-docs@1171ce66 docs/software/communication/
#: nvshmem.md.  MPI carries only the bootstrap's unique id (host bytes): GPU support off.
#: NVLink multicast off as everywhere (constants.NO_MULTICAST_ENV; GH200 nodes have no NVSwitch).
NVSHMEM_ENV = _str({
    "MPICH_GPU_SUPPORT_ENABLED": 0,
    "NVSHMEM_REMOTE_TRANSPORT": "libfabric",
    "NVSHMEM_LIBFABRIC_PROVIDER": "cxi",
    "NVSHMEM_DISABLE_CUDA_VMM": 1,
    "NVSHMEM_DISABLE_NVLS": NO_MULTICAST_ENV["NVSHMEM_DISABLE_NVLS"],
})

site_configuration = {
    "systems": [{
        "name": "alps",
        "descr": "CSCS Alps, GH200 nodes (Daint, Clariden, Santis)",
        "hostnames": [r"daint", r"clariden", r"santis"],
        "modules_system": "nomod",  # software comes from a uenv, requested through Slurm
        "partitions": [{
            "name": "gh200",
            "descr": "4 x GH200 per node, NVLink4 all-to-all, 4 x Slingshot-11",
            "scheduler": "slurm",
            "launcher": "srun",
            # normal: the default partition, whole nodes, any node count, 24 h; SBATCH_PARTITION=debug
            # for quick runs (1-2 nodes, 30 min in cscs-docs' sinfo example): docs/running/slurm.md.
            # An account: see "Sources" above
            "access": slurm_access("normal", account_required=True),
            "sched_options": {"use_nodes_option": True},
            "environs": ["prgenv-gnu"],
            "max_jobs": 100,
            "time_limit": "10m",
            "features": ["gpu", "nvgpu", "remote"],
            "devices": [{"type": "gpu", "arch": "sm_90", "num_devices": 4}],
            "resources": [gpu_resource("--gpus-per-node={num_gpus_per_node}")],
            "extras": {
                # the largest job of the partition in use (MAX_NODES; none for normal)
                Extras.MAX_NODES: MAX_NODES.get(PARTITION),
                # ... and its longest job (MAX_TIME)
                Extras.MAX_TIME: MAX_TIME.get(PARTITION),
                # guard (GB/s): largest GPU-pair link (Fig. 3: 1200 Gb/s = 150 GB/s) ...
                Extras.LINK_BANDWIDTH: 150,
                # ... and a GPU's links to all 3 peers (Figs. 5/6: 3600 Gb/s = 450 GB/s) ...
                Extras.GPU_BANDWIDTH: 450,
                # ... and the node's 4 NICs, a multi ping-pong's bound (Fig. 7: 800 Gb/s)
                Extras.NETWORK_BANDWIDTH: 100,
                # one Slingshot NIC per GH200, cxi0..cxi3 (cscs-rfm@2f813557 checks/system/network/
                # cxi_gpu_loopback_bw.py: cxi_gpu_loopback_bw -d cxi$j, j < 4).  gpus: the GPU nearest
                # each NIC (rfm.nicpath): cscs-docs:docs/alps/hardware.md, "four Grace-Hopper modules
                # and four corresponding NICs", whose schematic (docs/images/alps/gh200-schematic.svg)
                # draws hsn0 beside the module of Grace NUMA 0, hsn2 beside NUMA 1, hsn3 beside NUMA 2,
                # hsn1 beside NUMA 3; GPU i is module i's (the paper's map_cpu 1,73,145,217: core
                # 72 i + 1 for GPU i).  UNCONFIRMED: that cxiN is hsnN, and the drawing's order on a
                # node (check `nvidia-smi topo -m` / cxi_stat there)
                Extras.NICS: {"fabric": "cxi", "devices": ["cxi0", "cxi1", "cxi2", "cxi3"],
                              "gpus": [[0], [3], [1], [2]]},
                # the cores of each GPU's Grace: GPU i is attached to NUMA node i, cores 72 i .. 72 i + 71
                # (cscs-docs:docs/running/slurm.md: "each rank gets 72 cores, e.g. rank 1 gets cores
                # 72:143"; its MPS wrapper: "Each GPU is attached to the corresponding NUMA node").
                # NicPathCheck's second rank on a GPU takes the next of these after 72 i + 1 (rfm.nicpath)
                Extras.GPU_CORES: [list(range(72 * gpu, 72 * gpu + 72)) for gpu in range(4)],
                # where two nodes sit on the Slingshot dragonfly: one switch through Slurm.  The
                # paper's 2024 node pairs for different switch / group (blink:sbatch/alps/
                # two-nodes-diff-{switch,group}.sbatch) are not configured: node ids change with
                # every reconfiguration; give current nodes with -S nodelist=... (docs/sites/alps.md)
                Extras.PLACEMENT_OPTIONS: {"same-switch": ["--switches=1"]},
                # the noise study (checks/noise.py, --mode noise only): victim 2 nodes + aggressor 2
                # nodes in one job; Slurm can put all four on one leaf switch (--switches=1); the
                # other layouts need given nodes (-S victim_nodelist=... -S aggressor_nodelist=...)
                Extras.NOISE: {"aggressor_nodes": 2, "layouts": {"same-switch": {"job": ["--switches=1"]}}},
                # --mpi=cray_shasta: Cray MPICH in a uenv (cscs-rfm:checks/mixins/
                # uenv_slurm_mpi_options.py).  (The checks put the bind wrapper after every other
                # launcher option, the environment's too: rfm.mixins.launcher_options.)
                # paper configuration: blink:conf/alps.sh (--cpu-bind=map_cpu=1,73,145,217)
                Extras.LAUNCHER_OPTIONS: ["--mpi=cray_shasta", "--cpu-bind=map_cpu:1,73,145,217",
                                          bind_wrapper(__file__)],
                # one GPU per task = CUDA_VISIBLE_DEVICES=$SLURM_LOCALID, which CSCS documents as
                # what --gpus-per-task=1 does (cscs-docs:docs/running/slurm.md "One rank per GPU")
                Extras.METHOD_ENV_VARS: gpu_binding("CUDA_VISIBLE_DEVICES", range(4)),
            },
        }],
    }],
    "environments": [{
        "name": "prgenv-gnu",
        "target_systems": ["alps"],
        # nvshmem: the venv has the nvidia-nvshmem-cu13 wheel and the uenv nvcc (docs/sites/alps.md)
        "features": ["mpi", "gpu-aware-mpi", "cupy", "nccl", "nvshmem"],
        "env_vars": env_list({
            # NIC closest to the rank's GPU (HPE Cray MPICH man page, intro_mpi)
            "MPICH_OFI_NIC_POLICY": "GPU",
        }),
        "extras": {
            # the payload's interpreter: the venv of docs/sites/alps.md (GPUCOMM_PYTHON), else
            # python3 of the uenv view, which cannot import gpucomm
            Extras.PYTHON: python(required=True),
            Extras.RECIPE: "docs/sites/alps.md",
            Extras.JOB_OPTIONS: [f"--uenv={UENV}" + (f",{VENV_IMAGE}" if VENV_IMAGE else ""),
                                 "--view=default"],
            # per method (rfm.mixins.SiteOptions): GPU support only where MPI gets device
            # buffers; NCCL's variables for ccl only (ipc-copy's MPI messages are host handles
            # and flags).  The health sweep launches each group of methods with equal variables
            # separately (rfm.mixins.env_groups)
            Extras.METHOD_ENV_VARS: {
                "host": HOST_ENV,
                "staging": HOST_ENV,
                "gpu-aware-mpi": GPU_AWARE_ENV,
                "ccl": NCCL_ENV,
                "ipc-copy": HOST_ENV,
                "nvshmem": NVSHMEM_ENV,
            },
            Extras.PAPER_METHOD_ENV_VARS: {method: [{"env": PAPER_ENV}] for method in PAPER_METHOD},
            # the health sweep leaves nvshmem out (its own checks run it): on Alps the wheel's
            # libfabric transport with the uenv's cxi provider is unverified (cscs-docs documents
            # a source build only: nvshmem.md), and the paper's one-core-per-task binding starved
            # NVSHMEM's proxy thread on the reference node (docs/sites/alps.md, "nvshmem")
            Extras.SWEEP_LEFT_OUT: {"nvshmem": "unverified on Alps (docs/sites/alps.md, nvshmem): "
                                          "its own checks run it"},
            # nvshmem between nodes: the transport NVSHMEM_ENV selects (rfm.availability)
            Extras.NVSHMEM_REMOTE_TRANSPORT: "libfabric",
            # the log line that proves NCCL used the aws-ofi-nccl plugin over the cxi provider,
            # with NCCL_DEBUG=INFO: cscs-rfm:checks/microbenchmarks/xccl/xccl_tests.py
            # (assert_sanity); every ccl check and the sweep's ccl part write NCCL's log to
            # gpucomm_nccl_debug.*.log (NCCL_DEBUG_FILE) and fail without it.  library: what the
            # preflight dlopens before the launch, the name NCCL opens with NCCL_NET_PLUGIN unset
            # (NCCL src/plugin/plugin_open.cc: "libnccl-net.so"; the uenv's plugin is found that
            # way and not as libnccl-net-ofi.so: cscs-docs nccl.md "Do not use NCCL_NET_PLUGIN")
            Extras.CCL_NET_CHECK: {"env": {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"},
                              "pattern": r"NET/OFI Selected [pP]rovider is cxi",
                              "library": "libnccl-net.so"},
            # the plugin ships in prgenv-gnu's default view; with --view=modules it is the
            # module 'aws-ofi-nccl' (cscs-docs: nccl.md); nomod here, so data only
            Extras.CCL_PLUGIN_MODULE: os.environ.get("GPUCOMM_ALPS_CCL_PLUGIN", "aws-ofi-nccl"),
            # the native checks' tools: osu-micro-benchmarks 7.5.2 and nccl-tests 2.17.6 are in
            # prgenv-gnu/26.3's default view (cscs-docs:docs/software/prgenv/prgenv-gnu.md, "all
            # packages exposed via the default and modules views in v1"), which is mounted at
            # /user-environment, view default under env/default, only where the job runs
            # (cscs-docs:docs/software/uenv/using.md: "/user-environment/env/default/bin/gcc" from
            # srun; the login node's /user-environment is empty): the job itself looks the binary
            # up there (native.tools.job_lookup, find -maxdepth 6).  OSU's programs sit at depth 5
            # of the view: the recipe's default view links its roots (osu-micro-benchmarks and
            # nccl-tests among them) whole, `link: roots` (eth-cscs/alps-uenv@0fb91124
            # recipes/prgenv-gnu/26.3/gh200/environments.yaml), and Spack installs OSU's under
            # libexec/osu-micro-benchmarks/{mpi,xccl}/<group>/ (spack-packages@00caeea4
            # osu_micro_benchmarks/package.py).  GPUCOMM_OSU_DIR / _NCCL_TESTS_DIR win
            Extras.OSU_DIR: {"job": VIEW},
            Extras.NCCL_TESTS_DIR: {"job": VIEW},
        },
    }],
}
