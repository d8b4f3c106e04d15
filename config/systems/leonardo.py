"""CINECA Leonardo, Booster partition (the paper's "Leonardo").

Node: 1 Intel Xeon 8358 (32 cores, 2 sub-NUMA domains), 4 NVIDIA A100 64 GB SXM joined all-to-all
by NVLink3 (4 links = 100 GB/s per direction per GPU pair), 2 dual-port HDR100 InfiniBand NICs
(4 ports mlx5_0..mlx5_3, 12.5 GB/s each).  Nodes are shared between jobs unless --exclusive.

    SBATCH_ACCOUNT=<project> reframe -C config/settings.py --system leonardo -c checks/ -r

Sources:
* Booster partition boost_usr_prod, --gres=gpu:N, srun as the launcher, node sharing:
  CINECA user guide, Leonardo "Booster Section" (wiki.u-gov.it/confluence/display/SCAIUS/
  Booster+Section, now docs.hpc.cineca.it/hpc/leonardo.html).
* Modules (CUDA-aware Open MPI with UCX, NCCL) and the job layout (4 tasks per node,
  --cpus-per-task=8, --gres=gpu:4): the paper's runs (DanieleDeSensi/blink conf/leonardo.sh;
  HicrestLaboratory/Blink-GPU sbatch/leonardo/scriptgenerator4leonardo.sh).
* One HDR port per rank (UCX_NET_DEVICES=mlx5_<local rank>:1): the paper's device list
  (BLINK_IB_DEVICES=mlx5_0#...#mlx5_3) in local-rank order, as the usual per-rank wrappers do.
* HCOLL off: the paper's Figs. 9/10 runs are the "hcoll0" ones (paper_reference.md).
* Link limits: paper_reference.md, "Nominal bandwidths drawn in the paper's plots".
* Placement: --switches=1 (sbatch man page); Slurm's topology/tree sets SLURM_TOPOLOGY_ADDR in
  every task here, which the paper's authors read to tell the switch distance of two nodes
  (HicrestLaboratory/Blink-GPU utils/find_nodes_distance.sh) and the payload records.
"""

from gpucomm.site.siteconf import (bind_wrapper, env_list, gpu_binding, gpu_resource, python,
                              slurm_access)

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
            # whole nodes: a benchmark must not share NVLink, PCIe or NICs with other jobs
            "access": slurm_access("boost_usr_prod", "--exclusive"),
            "sched_options": {"use_nodes_option": True},
            "environs": ["openmpi-nccl"],
            "max_jobs": 100,
            "time_limit": "10m",
            "features": ["gpu", "nvgpu", "remote"],
            "devices": [{"type": "gpu", "arch": "sm_80", "num_devices": 4}],
            "resources": [gpu_resource("--gres=gpu:{num_gpus_per_node}")],
            "extras": {
                # guard (GB/s): GPU-pair link (Fig. 3: 800 Gb/s = 100 GB/s) ...
                "link_bandwidth_GBps": 100,
                # ... and a GPU's links to all 3 peers (Figs. 5/6: 2400 Gb/s = 300 GB/s) ...
                "gpu_bandwidth_GBps": 300,
                # ... and the node's 4 HDR100 ports, a multi ping-pong's bound (Fig. 7: 400 Gb/s)
                "network_bandwidth_GBps": 50,
                # one leaf switch through Slurm's topology/tree; other placements need given
                # nodes (-S nodelist=...): Slurm has no option for "apart"
                "placement_options": {"same-switch": ["--switches=1"]},
                # 8 cores per task in block order: tasks 0,1 on cores 0-15, tasks 2,3 on 16-31
                "launcher_options": ["--cpus-per-task=8", "--cpu-bind=cores", bind_wrapper(__file__)],
                "method_env_vars": gpu_binding(
                    "CUDA_VISIBLE_DEVICES", range(4),
                    UCX_NET_DEVICES=[f"mlx5_{i}:1" for i in range(4)]),
            },
        }],
    }],
    "environments": [{
        "name": "openmpi-nccl",
        "target_systems": ["leonardo"],
        "modules": ["cuda", "openmpi", "nccl"],  # the site defaults: CUDA-aware Open MPI + UCX
        "features": ["mpi", "gpu-aware-mpi", "cupy", "nccl"],
        "env_vars": env_list({
            "OMPI_MCA_pml": "ucx",
            "OMPI_MCA_coll_hcoll_enable": 0,
            "NCCL_IGNORE_CPU_AFFINITY": 1,
        }),
        "extras": {"python": python()},
    }],
    # ReFrame loads the modules into itself to resolve conflicts unless this is off, which needs
    # Lmod where the script is generated; off, a dry-run works anywhere and writes the same script
    # (on the site Lmod itself swaps modules of one family).  Needs config/settings.py to merge
    # the files' "general" sections; until then, export RFM_RESOLVE_MODULE_CONFLICTS=n off-site.
    "general": [{"resolve_module_conflicts": False, "target_systems": ["leonardo"]}],
}
