"""LUMI-G, partition standard-g (the paper's "LUMI").

Node: 1 AMD EPYC 7A53 (64 cores in 8 CCDs, first core of each reserved), 4 MI250X = 8 GCDs
joined by Infinity Fabric (GCD pairs 0-1: 200 GB/s, others 50 or 100 GB/s per direction,
paper Fig. 4), 4 Slingshot-11 NICs (25 GB/s each).  standard-g allocates whole nodes.

    SBATCH_ACCOUNT=project_<id> reframe -C config/settings.py --system lumi -c checks/ -r

Sources:
* Partition standard-g, --gpus-per-node, whole-node binding: the select_gpu wrapper
  (ROCR_VISIBLE_DEVICES=$SLURM_LOCALID) and CPU masks that give task i the CCD closest to
  GCD i: docs.lumi-supercomputer.eu/runjobs/scheduled-jobs/distribution-binding/ and
  .../lumig-job/.
* RCCL over Slingshot (aws-ofi-rccl; NCCL_SOCKET_IFNAME=hsn0..3, NCCL_NET_GDR_LEVEL=3,
  CXI_FORK_SAFE*, FI_CXI_DISABLE_CQ_HUGETLB): LUMI's PyTorch/RCCL examples in the LUMI docs.
* MPICH_GPU_SUPPORT_ENABLED=1 (Cray MPICH GTL) and MPICH_OFI_NIC_POLICY=GPU: HPE Cray MPICH
  man page (intro_mpi); HSA_ENABLE_SDMA=0 (device copies by blit kernels instead of the SDMA
  engines, which cap GCD-to-GCD copies well below the Infinity Fabric): ROCm HIP docs.
* Link limits: paper_reference.md, "Nominal bandwidths drawn in the paper's plots".
* Network: 24 dragonfly groups of 124 nodes, 32 switches per group, each node's 4 NICs on
  different switches (docs.lumi-supercomputer.eu/hardware/network/); placement as on Leonardo.
"""

from gpucomm.site.siteconf import (bind_wrapper, env_list, gpu_binding, gpu_resource, python,
                              slurm_access)

#: CPU masks for tasks 0..7 (LUMI docs): cores 49-55, 57-63, 17-23, 25-31, 1-7, 9-15, 33-39,
#: 41-47, i.e. the CCD attached to GCD 0..7
CPU_MASKS = ["fe000000000000", "fe00000000000000", "fe0000", "fe000000",
             "fe", "fe00", "fe00000000", "fe0000000000"]

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
            "access": slurm_access("standard-g"),
            "sched_options": {"use_nodes_option": True},
            "environs": ["cray-rccl"],
            "max_jobs": 100,
            "time_limit": "10m",
            "features": ["gpu", "amdgpu", "remote"],
            "devices": [{"type": "gpu", "arch": "gfx90a", "num_devices": 8}],
            "resources": [gpu_resource("--gpus-per-node={num_gpus_per_node}")],
            "extras": {
                # guard (GB/s): the fastest GCD pair, 0-1 (Figs. 3/4: 1600 Gb/s = 200 GB/s) ...
                "link_bandwidth_GBps": 200,
                # ... and GCD 0 to all 7 peers, the sum of Fig. 4's bar tops (4800 Gb/s) ...
                "gpu_bandwidth_GBps": 600,
                # ... and the node's 4 NICs, a multi ping-pong's bound (Fig. 7: 800 Gb/s)
                "network_bandwidth_GBps": 100,
                # GCD pairs by nominal Infinity Fabric bandwidth (Gb/s per direction), the
                # pair-matrix check's reference classes (gpucomm.pairs.pair_class).  Sourced:
                # the two GCDs of one MI250X, 1600 (LUMI docs: in-package IF 400 GB/s
                # bidirectional; paper Fig. 4: 0-1 = 1600); from GCD 0, Fig. 4's bar tops 0-6,
                # 0-7 = 800 and 0-2..0-5 = 400.  ASSUMED, not checked on a node: the other
                # cross-module pairs by the same module symmetry (modules 0-3 and 1-2 joined by
                # dual links, the rest single); verify with `rocm-smi --showtopo` on LUMI-G.
                "pair_classes": {"1600": ["0-1", "2-3", "4-5", "6-7"],
                                 "800": ["0-6", "0-7", "1-6", "1-7", "2-4", "2-5", "3-4", "3-5"],
                                 "default": "400"},
                # one switch through Slurm (a LUMI-G node's 4 NICs sit on 4 switches of its
                # group: Slurm's leaf is what "switch" means here); others: -S nodelist=...
                "placement_options": {"same-switch": ["--switches=1"]},
                "launcher_options": ["--cpu-bind=mask_cpu:" + ",".join(CPU_MASKS),
                                     bind_wrapper(__file__)],
                "method_env_vars": gpu_binding("ROCR_VISIBLE_DEVICES", range(8)),
            },
        }],
    }],
    "environments": [{
        "name": "cray-rccl",
        "target_systems": ["lumi"],
        "modules": ["LUMI", "partition/G", "PrgEnv-cray", "craype-accel-amd-gfx90a", "rocm",
                    "aws-ofi-rccl"],
        "features": ["mpi", "gpu-aware-mpi", "cupy", "rccl"],
        "env_vars": env_list({
            "MPICH_GPU_SUPPORT_ENABLED": 1,
            "MPICH_OFI_NIC_POLICY": "GPU",
            "HSA_ENABLE_SDMA": 0,
            "NCCL_SOCKET_IFNAME": "hsn0,hsn1,hsn2,hsn3",
            "NCCL_NET_GDR_LEVEL": 3,
            "NCCL_IGNORE_CPU_AFFINITY": 1,
            "CXI_FORK_SAFE": 1,
            "CXI_FORK_SAFE_HP": 1,
            "FI_CXI_DISABLE_CQ_HUGETLB": 1,
        }),
        "extras": {"python": python()},
    }],
    # ReFrame loads the modules into itself to resolve conflicts unless this is off, which needs
    # Lmod where the script is generated; off, a dry-run works anywhere and writes the same script
    # (on the site Lmod itself swaps modules of one family).  Needs config/settings.py to merge
    # the files' "general" sections; until then, export RFM_RESOLVE_MODULE_CONFLICTS=n off-site.
    "general": [{"resolve_module_conflicts": False, "target_systems": ["lumi"]}],
}
