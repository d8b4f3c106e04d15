"""CSCS Alps, GH200 nodes (the paper's "Alps"; today the vClusters Daint, Clariden, Santis).

Node: 4 GH200 (Grace CPU + H100 GPU, 72 cores each), every GPU pair joined by 6 NVLink4 links
(150 GB/s per direction), 4 Slingshot-11 NICs (25 GB/s each), one per GH200.

    reframe -C config/settings.py --system alps -c checks/ -r
    SBATCH_ACCOUNT=g123 reframe -C config/settings.py --system alps -c checks/ -r

Sources:
* Slurm on GH200, accounts, one rank per GPU: https://docs.cscs.ch/running/slurm/
  (eth-cscs/cscs-docs docs/running/slurm.md); the GPU request as in CSCS's own ReFrame
  config (eth-cscs/cscs-reframe-tests config/systems/daint.py: '--gpus-per-node').
* Cray MPICH GPU support (GTL + MPICH_GPU_SUPPORT_ENABLED=1):
  docs/software/communication/cray-mpich.md.
* NCCL over Slingshot (aws-ofi-nccl, NCCL_NET, FI_CXI_*):
  docs/software/communication/nccl.md and its nccl_env_vars file.
* CPU map 1,73,145,217 (one core of each Grace, next to its GPU): the paper's run
  configuration (DanieleDeSensi/blink conf/alps.sh, BLINK_PINNING_FLAGS).
* Link limits: paper_reference.md, "Nominal bandwidths drawn in the paper's plots".
* Placement: one switch with Slurm's --switches=1 (sbatch man page; honoured where Slurm has a
  topology/tree, which then sets SLURM_TOPOLOGY_ADDR, and checked after the run); different
  switch / group as the node pairs of the paper's runs (DanieleDeSensi/blink, branch sc24,
  sbatch/alps/two-nodes{,-diff-switch,-diff-group}.sbatch); -S nodelist=... overrides them.
"""

import os

from gpucomm.site.siteconf import (bind_wrapper, env_list, gpu_binding, gpu_resource, python,
                              slurm_access)

#: the uenv providing Cray MPICH (with the CUDA GTL), CUDA, NCCL and aws-ofi-nccl;
#: override with GPUCOMM_ALPS_UENV (e.g. a newer prgenv-gnu)
UENV = os.environ.get("GPUCOMM_ALPS_UENV", "prgenv-gnu/24.11:v1")

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
            "access": slurm_access("normal"),
            "sched_options": {"use_nodes_option": True},
            "environs": ["prgenv-gnu"],
            "max_jobs": 100,
            "time_limit": "10m",
            "features": ["gpu", "nvgpu", "remote"],
            "devices": [{"type": "gpu", "arch": "sm_90", "num_devices": 4}],
            "resources": [gpu_resource("--gpus-per-node={num_gpus_per_node}")],
            "extras": {
                # guard (GB/s): largest GPU-pair link (Fig. 3: 1200 Gb/s = 150 GB/s) ...
                "link_bandwidth_GBps": 150,
                # ... and a GPU's links to all 3 peers (Figs. 5/6: 3600 Gb/s = 450 GB/s) ...
                "gpu_bandwidth_GBps": 450,
                # ... and the node's 4 NICs, a multi ping-pong's bound (Fig. 7: 800 Gb/s)
                "network_bandwidth_GBps": 100,
                # where two nodes sit on the Slingshot dragonfly: one switch through Slurm; the
                # other two as the paper's pairs (its same-switch pair: nid001058,nid001056)
                "placement_options": {
                    "same-switch": ["--switches=1"],
                    "different-switch": ["--nodelist=nid001056,nid001128"],
                    "different-group": ["--nodelist=nid001058,nid007112"],
                },
                "launcher_options": ["--cpu-bind=map_cpu:1,73,145,217", bind_wrapper(__file__)],
                "method_env_vars": gpu_binding("CUDA_VISIBLE_DEVICES", range(4)),
            },
        }],
    }],
    "environments": [{
        "name": "prgenv-gnu",
        "target_systems": ["alps"],
        "features": ["mpi", "gpu-aware-mpi", "cupy", "nccl"],
        "env_vars": env_list({
            # Cray MPICH: GPU buffers through the CUDA GTL; NIC closest to the rank's GPU
            "MPICH_GPU_SUPPORT_ENABLED": 1,
            "MPICH_OFI_NIC_POLICY": "GPU",
            # NCCL: the aws-ofi-nccl plugin or fail (no silent TCP fallback), CSCS's settings
            "NCCL_NET": '"AWS Libfabric"',
            "NCCL_NET_GDR_LEVEL": "PHB",
            "NCCL_CROSS_NIC": 1,
            "NCCL_PROTO": "^LL128",
            "NCCL_IGNORE_CPU_AFFINITY": 1,
            "FI_CXI_DEFAULT_CQ_SIZE": 131072,
            "FI_CXI_DEFAULT_TX_SIZE": 32768,
            "FI_CXI_DISABLE_HOST_REGISTER": 1,
            "FI_CXI_RX_MATCH_MODE": "software",
            "FI_MR_CACHE_MONITOR": "userfaultfd",
        }),
        "extras": {
            "python": python(),
            "job_options": [f"--uenv={UENV}", "--view=default"],
        },
    }],
}
