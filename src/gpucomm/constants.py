"""Every name gpucomm's layers share, stated once (as EESSI's ``constants.py``).

Payload, ReFrame library, site helpers and analysis import these; none of them spells a method,
a feature, an extras key or an exit code as a literal of its own.  A method and an operation
are each one declaration (METHOD_DECLS, OPERATION_DECLS) that every layer reads.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class MethodDecl:
    """One method, declared once (as nccl-tests' ``struct testColl``): every layer reads its
    facts from here (the payload's registry, rfm.availability, the references, the report's
    colours, the docs' tables), so that a new method is its payload file plus one declaration."""
    name: str
    #: the payload's class, "module:Class" under gpucomm.payload.methods (payload/methods/__init__.py)
    payload: str
    #: what a partition and an environment must offer (ReFrame feature specs, each one a choice)
    systems: tuple[str, ...]
    environs: tuple[str, ...]
    #: paper_reference.csv's name of it (its ``method`` column); None: beyond the paper
    paper: str | None
    #: its colour in the report's plots
    color: str
    #: moves device memory: one GPU per rank
    gpu: bool = True
    #: between the GPUs of one node only (no multi-node run)
    one_node: bool = False
    #: across nodes only where the environment names a remote transport (extras)
    needs_remote_transport: bool = False
    #: collectives on device buffers only where the MPI is fully GPU-aware
    collectives_need_full_gpu_aware: bool = False


@dataclass(frozen=True)
class Bandwidths:
    """An operation's bandwidth formulas (gpucomm.metrics evaluates them), each a number of bytes
    or a factor, of its size S, its ranks n and its concurrent pairs P, as numbers per second
    over one operation's time: goodput (the paper's, Sec. 3), algbw (nccl-tests': its buffer),
    busbw (nccl-tests': algbw times the bus factor)."""
    #: the bytes of the paper's goodput (S: ping-pong, all-reduce; S (n - 1): all-to-all ...)
    goodput: Callable[[int, int, int], float] = lambda s, n, p: s
    #: the bytes of nccl-tests' algbw (S; S n for all-to-all)
    buffer: Callable[[int, int, int], float] = lambda s, n, p: s
    #: busbw / algbw (1; 2 (n - 1) / n for all-reduce; P for the multi ping-pong)
    bus: Callable[[int, int], float] = lambda n, p: 1.0


@dataclass(frozen=True)
class OperationDecl:
    """One payload operation, declared once: its name, its payload class, what its size means,
    its bandwidth formulas."""
    name: str
    #: the payload's class, "module:Class" under gpucomm.payload.ops (payload/ops/__init__.py)
    payload: str
    #: what "size" means (gpucomm.metrics: S in its goodput formula; the report's axis)
    size_meaning: str | None = None
    collective: bool = False
    #: its goodput, algbw and busbw (None: none of the paper's, as the aggressor's whole run)
    bandwidths: Bandwidths | None = Bandwidths()
    #: the bandwidths of the records it writes under other names ({record op: formulas}: the
    #: pair matrix's pair-uni and pair-bidir)
    modes: tuple[tuple[str, Bandwidths], ...] = ()
    #: where the paper measured it: (paper_reference.csv's operation, its figure inside a node,
    #: its figure across nodes; None: not measured there); None: beyond the paper
    #: (analysis.references writes the references of those figures)
    paper: tuple[str, str | None, str | None] | None = None


#: the methods, in the paper's order plus host MPI (the CPU stand-in and Fig. 7's baseline), then
#: those the paper did not measure: nvshmem (GPU-initiated puts from inside kernels)
HOST, STAGING, GPU_AWARE_MPI, IPC_COPY, CCL = "host", "staging", "gpu-aware-mpi", "ipc-copy", "ccl"
NVSHMEM = "nvshmem"
METHOD_DECLS = (
    MethodDecl(HOST, "host:HostMethod", ("*",), ("+mpi",), "host_mpi", "#7f7f7f", gpu=False),
    MethodDecl(STAGING, "staging:StagingMethod", ("+gpu",), ("+mpi +cupy",), "staging", "#ff7f0e"),
    MethodDecl(GPU_AWARE_MPI, "gpu_aware_mpi:GpuAwareMpiMethod", ("+gpu",), ("+gpu-aware-mpi +cupy",),
               "gpu_aware_mpi", "#2ca02c", collectives_need_full_gpu_aware=True),
    MethodDecl(IPC_COPY, "ipc_copy:IpcCopyMethod", ("+gpu",), ("+mpi +cupy",), "device_copy", "#9467bd",
               one_node=True),
    MethodDecl(CCL, "ccl:CclMethod", ("+gpu",), ("+mpi +cupy +nccl", "+mpi +cupy +rccl"), "ccl", "#1f77b4"),
    MethodDecl(NVSHMEM, "nvshmem:NvshmemMethod", ("+gpu +nvgpu",), ("+mpi +cupy +nvshmem",), None, "#e377c2",
               needs_remote_transport=True),
)
#: name -> declaration
METHOD_OF_NAME = {d.name: d for d in METHOD_DECLS}
METHODS = tuple(d.name for d in METHOD_DECLS)
#: the methods without a counterpart in the paper (no PAPER_METHOD entry)
BEYOND_PAPER = tuple(d.name for d in METHOD_DECLS if d.paper is None)
#: the methods that move device memory (every one but host)
GPU_METHODS = tuple(d.name for d in METHOD_DECLS if d.gpu)

#: our method -> the paper's benchmark name in paper_reference.csv (its ``method`` column)
PAPER_METHOD = {d.name: d.paper for d in METHOD_DECLS if d.paper is not None}
#: the paper's name -> ours
METHOD_OF_PAPER = {paper: ours for ours, paper in PAPER_METHOD.items()}

#: payload operations (``python -m gpucomm OP``)
PINGPONG, BW, MULTI_PINGPONG, PAIR_MATRIX = "pingpong", "bw", "multi-pingpong", "pair-matrix"
#: the pair matrix's modes as its records' bandwidths name them (metrics: one pair one way, both ways)
PAIR_UNI, PAIR_BIDIR = "pair-uni", "pair-bidir"
ALLREDUCE, ALLTOALL = "allreduce", "alltoall"
#: sustained background traffic for a given time (a noise study's aggressor, not a benchmark)
AGGRESSOR = "aggressor"
#: every GPU's own data paths: host <-> device over its link and its device memory (ops/datapaths.py)
GPU_DATAPATHS = "gpu-datapaths"
OPERATION_DECLS = (
    OperationDecl(PINGPONG, "pingpong:PingPong", "message size (each way)", paper=("pingpong", "fig3", None)),
    OperationDecl(BW, "bandwidth:Bandwidth", "message size (each message of the window)"),
    OperationDecl(MULTI_PINGPONG, "multipingpong:MultiPingPong", "message size per pair",
                  bandwidths=Bandwidths(goodput=lambda s, n, p: s * p, bus=lambda n, p: p),
                  paper=("pingpong", None, "fig7")),
    OperationDecl(PAIR_MATRIX, "pairmatrix:PairMatrix", "message size per GPU pair (each way)", bandwidths=None,
                  modes=((PAIR_UNI, Bandwidths()), (PAIR_BIDIR, Bandwidths(goodput=lambda s, n, p: 2 * s)))),
    OperationDecl(ALLREDUCE, "allreduce:AllReduce", "buffer size per rank (the vector)", collective=True,
                  bandwidths=Bandwidths(bus=lambda n, p: 2 * (n - 1) / n), paper=("allreduce", "fig6", "fig10")),
    OperationDecl(ALLTOALL, "alltoall:AllToAll",
                  "block size per peer (each rank sends one block to every other rank)", collective=True,
                  bandwidths=Bandwidths(goodput=lambda s, n, p: s * (n - 1), buffer=lambda s, n, p: s * n,
                                        bus=lambda n, p: (n - 1) / n), paper=("alltoall", "fig5", "fig9")),
    OperationDecl(AGGRESSOR, "aggressor:Aggressor", bandwidths=None),
    OperationDecl(GPU_DATAPATHS, "datapaths:DataPaths", "copy size (each direction)", bandwidths=None),
)
OPERATIONS = tuple(d.name for d in OPERATION_DECLS)
COLLECTIVES = tuple(d.name for d in OPERATION_DECLS if d.collective)
#: its paths: direction (h2d, d2h, bidir: both at once; local: device memory) and engine (ce: the
#: copy engine, cudaMemcpyAsync; sm: a kernel's loads and stores on mapped pinned host memory)
DATAPATH_LOCAL = "local-ce"
DATAPATHS = ("h2d-ce", "d2h-ce", "bidir-ce", "h2d-sm", "d2h-sm", "bidir-sm", DATAPATH_LOCAL)
#: the pair matrix's pairs (--pairs): every pair one at a time and the concurrent rounds, or the
#: rounds of disjoint pairs only (n-1 rounds for n ranks: a node-pair matrix of many nodes)
PAIRS_ALL, PAIRS_ROUNDS = "all", "rounds"
PAIR_SCOPES = (PAIRS_ALL, PAIRS_ROUNDS)

#: the MPI methods' timed loop of a point-to-point sample (payload.fastloop, --loop): compiled
#: through numba-mpi where it loads, else mpi4py's; auto takes the first that can run
LOOP_NUMBA_MPI, LOOP_MPI4PY, LOOP_AUTO = "numba-mpi", "mpi4py", "auto"
LOOPS = (LOOP_NUMBA_MPI, LOOP_MPI4PY)
LOOP_CHOICES = (LOOP_AUTO,) + LOOPS
#: the environment variable that sets --loop's default (a site, a test suite)
LOOP_ENV = "GPUCOMM_LOOP"
#: extra mpirun options of the autodetected local system (config/systems/local.py), e.g. the
#: binding: "--bind-to none" (Open MPI binds each of two ranks to one core by default)
LOCAL_MPIRUN_OPTIONS_ENV = "GPUCOMM_MPIRUN_OPTIONS"
#: the process a payload's ranks outlive by no more than a moment: "PID:START" (contract.
#: process_token) of the ReFrame run whose local job launched them (rfm.watch)
WATCH_PID_ENV = "GPUCOMM_WATCH_PID"

#: ReFrame features: of a partition (gpu, nvgpu, amdgpu) and of an environment (the rest)
FEATURE_GPU, FEATURE_NVGPU, FEATURE_AMDGPU = "gpu", "nvgpu", "amdgpu"
FEATURE_MPI, FEATURE_CUPY, FEATURE_NCCL, FEATURE_RCCL = "mpi", "cupy", "nccl", "rccl"
FEATURE_GPU_AWARE_MPI = "gpu-aware-mpi"
#: the mark of gpucomm's ReFrame configuration: config/settings.py gives every partition of
#: config/systems/*.py this feature; the checks select only such partitions, and the one check
#: valid elsewhere (checks/config.py) fails saying how to load the configuration
FEATURE_GPUCOMM = "gpucomm"
#: the environment has NVSHMEM (library and nvcc to build the nvshmem method's kernels)
FEATURE_NVSHMEM = "nvshmem"

#: method -> (valid_systems, valid_prog_environs): what a partition and an environment must
#: offer (ReFrame feature specs; rfm.availability reads them for every check and the sweep)
METHOD_REQUIREMENTS = {d.name: (list(d.systems), list(d.environs)) for d in METHOD_DECLS}

#: how far an MPI takes device buffers (payload.capabilities; GPUCOMM_GPU_AWARE_MPI's values)
GPU_AWARE_NONE, GPU_AWARE_P2P, GPU_AWARE_FULL = "none", "p2p", "full"
GPU_AWARE_LEVELS = (GPU_AWARE_NONE, GPU_AWARE_P2P, GPU_AWARE_FULL)

#: where the nodes of a multi-node job sit on the network, nearest first (payload.topology)
PLACEMENTS = ("same-switch", "different-switch", "different-group")
ANY_PLACEMENT = "any"

#: a noise study's layouts (rfm.noise): layout -> (the victim's own placement, where the
#: aggressor's nodes are: on the victim's leaf switches, or on other switches)
SAME_SWITCHES, OTHER_SWITCHES = "victim-switches", "other-switches"
NOISE_LAYOUTS = {
    "shared-link": ("different-switch", SAME_SWITCHES),  # both cross the same inter-switch links
    "same-switch": ("same-switch", SAME_SWITCHES),       # all four on one leaf switch
    "apart": ("same-switch", OTHER_SWITCHES),            # victim in one switch, aggressor elsewhere
}
#: whom -S service_level applies to in a noise study
SERVICE_LEVEL_TARGETS = ("victim", "aggressor", "both")

#: keys of a partition's or an environment's ``extras`` that the checks read (config/systems/*.py
#: set them through these names; tests/rfm/test_extras_keys.py holds every key of the
#: configuration and of the tests to this list)
class Extras:
    PYTHON = "python"                              # environment: the payload's interpreter
    GPU_AWARE_MPI_LEVEL = "gpu_aware_mpi_level"    # environment: none, p2p, full
    NODES = "nodes"                                # partition: how many nodes it has
    PLACEMENT_OPTIONS = "placement_options"        # partition: {placement: [sbatch options]}
    LAUNCHER_OPTIONS = "launcher_options"          # list, every launch
    METHOD_LAUNCHER_OPTIONS = "method_launcher_options"  # {method or 'default': list}
    JOB_OPTIONS = "job_options"                    # list of scheduler options
    METHOD_ENV_VARS = "method_env_vars"            # {method or 'default': {VAR: value}}
    LINK_BANDWIDTH = "link_bandwidth_GBps"         # one GPU pair's link, GB/s
    GPU_BANDWIDTH = "gpu_bandwidth_GBps"           # all links of one GPU, GB/s
    NETWORK_BANDWIDTH = "network_bandwidth_GBps"   # one node's network, GB/s
    PAIR_CLASSES = "pair_classes"                  # {class: ["0-1", ...], "default": class}
    OSU_DIR = "osu_dir"
    NCCL_TESTS_DIR = "nccl_tests_dir"
    RECIPE = "recipe"                              # environment: docs/sites/<site>.md (the venv)
    QOS_BY_NODES = "qos_by_nodes"                  # partition: [[max nodes, qos], ...] ascending
    MAX_NODES = "max_nodes"                        # partition: the largest job it takes
    MAX_TIME = "max_time"                          # partition: the longest job it takes ("24h"; rfm.plan)
    CCL_NET_CHECK = "ccl_net_check"                # environment: {env, pattern, fallback_pattern, library}
    CCL_PLUGIN_MODULE = "ccl_plugin_module"        # environment: NCCL/RCCL's network plugin module
    PAPER_METHOD_ENV_VARS = "paper_method_env_vars"  # environment: {method: [{env, ops, single_node}]}
    PAPER_SERVICE_LEVELS = "paper_service_levels"  # environment: {family: SL or [[nodes, SL]]} (paper)
    SERVICE_LEVEL_VARS = "service_level_vars"      # partition (InfiniBand): variables taking the SL
    MULTI_PINGPONG = "multi_pingpong"              # partition: the paper's two-node layout
    NVSHMEM_REMOTE_TRANSPORT = "nvshmem_remote_transport"  # environment: NVSHMEM between nodes
    TOPOLOGY = "topology"                          # partition: Slurm's topology plugin ('tree')
    NOISE = "noise"                                # partition: a noise study's nodes (rfm.noise)
    NICS = "nics"                                  # partition: {"fabric": ib/cxi/socket, "devices", "gpus": nearest}
    GPU_CORES = "gpu_cores"                        # partition: per GPU, the cores of the CPU it is attached to
    MPI_CUDA = "mpi_cuda"                          # environment: gpu-aware-mpi needs an MPI built with CUDA (preflight)
    SWEEP_LEFT_OUT = "sweep_left_out"              # environment: {method: why not in the health sweep}


#: a reference file's top-level key (config/references/<system>.yaml) listing the checks whose
#: entries are the paper's measurements (gpucomm.analysis.references): they judge a run only
#: with the paper's settings (the paper mode, -S paper_tuning=y) and are information otherwise
#: (rfm.GpucommCheck.set_references); a site's own entries (bring-up) judge in every mode
PAPER_REFERENCES = "$paper"

#: extras['python'] of a site whose payload interpreter was not given (GPUCOMM_PYTHON unset):
#: a run there fails at setup, naming the recipe, instead of submitting a job that cannot run;
#: a dry run writes PYTHON_PLACEHOLDER in its place (and says so once)
PYTHON_UNSET = "<unset: GPUCOMM_PYTHON>"
#: the interpreter a dry run writes where GPUCOMM_PYTHON is unset ({recipe}: the site's page):
#: the shell takes GPUCOMM_PYTHON from the job's environment, or ends the job naming the recipe
PYTHON_PLACEHOLDER = "${{GPUCOMM_PYTHON:?the payload venv python, built per {recipe}}}"
#: the Slurm account a dry run writes where a site requires one and SBATCH_ACCOUNT is unset
#: (site.siteconf.slurm_access); a run there fails at setup saying so
ACCOUNT_UNSET = "<unset: SBATCH_ACCOUNT>"

#: the payload samples a size until the median's 95 % interval is this narrow (relative
#: half-width): a latency-bound size (up to PRECISION_LATENCY_MAX bytes) and a bandwidth-bound one
PRECISION_TARGET_LATENCY = 0.01
PRECISION_TARGET_BANDWIDTH = 0.003
PRECISION_LATENCY_MAX = 64 << 10
#: the seconds of timed samples a size may reach while blocks are added to meet the target,
#: where no --budget is given (with one, the budget is the cap)
PRECISION_CAP_S = 0.1

#: the payload's exit codes (payload.cli; the README lists them)
EXIT_OK = 0
EXIT_INTERNAL = 1      # a bug or an unexpected library failure
EXIT_BAD_INPUT = 2
EXIT_CAPABILITY = 3    # this machine cannot run the method or operation
EXIT_VALIDATION = 4    # received data did not match what was sent
EXIT_IMPLAUSIBLE = 5   # a bandwidth above the link's nominal limit
EXIT_INTERRUPTED = 130
EXIT_TIMEOUT = 124     # the watchdog ended a hang
#: the payload's --timeout (s) in a check without a time limit (-S time_limit=0): a hung rank
#: still ends, with its watchdog's reason, after the longest run a check is expected to take
PAYLOAD_TIMEOUT_CEILING_S = 6 * 3600
#: the node-state reader's (site.nodestate): the node's hardware is not what its class expects
EXIT_HARDWARE = 10

#: ``gpucomm report``'s exit codes besides EXIT_OK (ReFrame passed this run), EXIT_INTERNAL and
#: EXIT_BAD_INPUT (bad options, or nothing readable among the inputs); its --help lists them
EXIT_REPORT_FAIL = 6         # ReFrame failed a test case of this run
EXIT_REPORT_NOTHING_RAN = 7  # this run had no test case, or skipped every one
EXIT_REPORT_DRY_RUN = 8      # this run was a ReFrame --dry-run: nothing was measured
EXIT_REPORT_NO_VERDICT = 9   # no ReFrame test case among the inputs (plots only)
#: a verdict that is not final: nothing failed, but suspects to retest (``gpucomm acceptance``'s
#: suspects; ``gpucomm report`` / ``nightly``: a night whose drift has suspects, SUSPECT)
EXIT_RETEST = 11
#: ``gpucomm acceptance``: nothing to drain or retest, but a node the fleet rule could not judge
EXIT_ACCEPTANCE_NOT_JUDGED = 12

#: ``gpucomm nightly`` stopped by a signal: seconds reframe has to cancel its jobs and write its
#: report before it and every process under it are killed, then seconds the processes that were
#: under it have to end (its jobs' ranks watch it: rfm.watch) before they are killed
NIGHTLY_STOP_GRACE_S = 20
NIGHTLY_ORPHAN_GRACE_S = 5
#: the largest --night-gap (hours): a year; a longer one makes no night (1e308 h overflowed the
#: seconds it is compared in and ended the report in an internal error, after the night had run)
NIGHT_GAP_MAX_H = 24 * 366

#: the environment of every run on a shared GPU node: no NVLink multicast for NCCL, PyTorch
#: or NVSHMEM
NO_MULTICAST_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                    "NVSHMEM_DISABLE_NVLS": "1"}

#: the payload's fault-injection hooks (payload/faults.py reads them; docs/testing.md)
TEST_CORRUPT, TEST_HANG, TEST_HANG_EXIT = "GPUCOMM_TEST_CORRUPT", "GPUCOMM_TEST_HANG", "GPUCOMM_TEST_HANG_EXIT"
TEST_SLOW_PAIR, TEST_IPC_REFUSED = "GPUCOMM_TEST_SLOW_PAIR", "GPUCOMM_TEST_IPC_REFUSED"
TEST_CORRUPT_EVERY = "GPUCOMM_TEST_CORRUPT_EVERY"   # makes TEST_CORRUPT intermittent (the soak)
TEST_SLOW_GPU = "GPUCOMM_TEST_SLOW_GPU"   # IDX:FACTOR: GPU IDX's data paths at FACTOR of their speed
#: HOST[,HOST]:FACTOR, a node FACTOR times slower in every timed sample (acceptance's slow node)
TEST_SLOW_NODE = "GPUCOMM_TEST_SLOW_NODE"
#: hook -> (methods, operations) where it can fire (None: every one); a hook set where it
#: cannot fire would test nothing and say nothing: a failure naming it (HANG_EXIT modifies HANG)
TEST_HOOK_SCOPE = {
    TEST_CORRUPT: (None, None),
    TEST_CORRUPT_EVERY: (None, None),
    TEST_HANG: (None, None),
    TEST_HANG_EXIT: (None, None),
    TEST_SLOW_PAIR: (None, (PAIR_MATRIX,)),
    TEST_SLOW_NODE: (None, None),
    TEST_IPC_REFUSED: ((IPC_COPY,), None),
    TEST_SLOW_GPU: (None, (GPU_DATAPATHS,)),
}
#: the hooks whose only effect is on the numbers: they can fail a check only against a reference
#: (TEST_SLOW_NODE is judged against the other nodes, by gpucomm acceptance: no reference needed)
TEST_HOOKS_PERF_ONLY = (TEST_SLOW_PAIR, TEST_SLOW_GPU)

#: ReFrame's time-period query for every stored session (gpucomm report --stored-sessions)
ALL_SESSIONS = "19700101T0000+0000:now"
