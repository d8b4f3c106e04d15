"""Every GPU's own data paths: host <-> device over its link (PCIe, NVLink-C2C, Infinity
Fabric) and its device memory, one rank per GPU (``--method staging``: the paper's staging
copies are these; the method's own transfers are not used).

Paths (constants.DATAPATHS, ``--paths``): ``h2d-ce``, ``d2h-ce``, ``bidir-ce`` (copy engine:
cudaMemcpyAsync on the rank's stream; bidir: host -> device and device -> host on two streams at
once), ``h2d-sm``, ``d2h-sm``, ``bidir-sm`` (a kernel's 16-byte loads and stores over the link
on mapped pinned host memory; bidir: every other warp each way) and ``local-ce`` (a device-local
copy, cudaMemcpyAsync device -> device).  Host memory is pinned (registered, mapped) and placed
on the GPU's own NUMA node (``near``), the farthest node with CPUs (``far``, ``--host-numa
far|both``) or a given one (``--numa-node N``): payload/numa.py says how, the meta which
binding ran and where the pages are.  ``--pageable``: pageable host memory instead, copy-engine
paths only (where asked; pinned is what the staging method and the references use).

Cases per size and path (one record each): every GPU alone (``scope=single gpu=G``, the other
ranks idle in the engine's barriers), then, on several GPUs, all at once (``scope=all``: the
record's time is the slowest GPU's; ``gpu_results`` each GPU's, so that a shared PCIe switch
shows).  Records name the GPU by index and PCI bus id.  Figures (metrics.datapath_GBps):
goodput S/t (bidir 2S/t), busbw the host link's one direction (bidir S/t; local-ce 0: none
crosses it, the engine's guard holds the rest to the link's nominal), ``hbm_GBps`` = 2S/t for
local-ce (read + write), held here to the memory's peak from the device's clock and bus width
where the size is larger than the L2 cache (a copy that fits may run from the cache, above the
memory's peak: measured on an H100 at 16 MiB).

Timing: device events on the rank's stream around each sample (side streams join it), warm-up
iterations each synchronised, every destination poisoned before and checked byte for byte
after the timed samples.  ``GPUCOMM_TEST_SLOW_GPU=IDX:FACTOR`` (payload.faults) makes GPU IDX's
times 1/FACTOR longer (its bandwidth FACTOR of what it is): the check's references fail it.
"""

import resource

import numpy as np

from ...constants import DATAPATH_LOCAL, DATAPATHS, GPU_DATAPATHS, STAGING
from ...errors import CapabilityError, GpucommError, PlausibilityError, collective
from ...metrics import datapath_GBps
from ..backend import NumpyBackend, pattern_seed
from ..faults import SLOW_GPU, slow_gpu_request
from ..numa import HostBuffer, cpu_nodes, farthest, gpu_node
from ..topology import nominal_pcie_GBps
from .base import Operation

NEAR, FAR = "near", "far"
HOST_NUMA = (NEAR, FAR, "both")
#: cudaHostRegisterPortable | cudaHostRegisterMapped
REGISTER_FLAGS = 1 | 2
#: cudaMemcpyKind
H2D, D2H, D2D = 1, 2, 3
#: CAP_IPC_LOCK (linux/capability.h): exempt from RLIMIT_MEMLOCK
CAP_IPC_LOCK = 14
#: the SM kernels' threads per block and blocks per multiprocessor
BLOCK, BLOCKS_PER_SM = 512, 4
#: device attributes by name in cupy's runtime (memory clock in kHz, memory bus width in bits):
#: cupy maps each to the platform's own value (cupy_backends/cuda/api/_runtime_enum.pxd: CUDA's
#: cudaDevAttrMemoryClockRate = 36, cudaDevAttrGlobalMemoryBusWidth = 37; under ROCm
#: hipDeviceAttributeMemoryClockRate / MemoryBusWidth, other numbers: "CUDA and HIP use
#: different values!"), so the raw CUDA numbers would read other attributes on LUMI
ATTR_MEMORY_CLOCK, ATTR_BUS_WIDTH = "cudaDevAttrMemoryClockRate", "cudaDevAttrGlobalMemoryBusWidth"
#: the L2 cache's size in bytes, by name as above (hipDeviceAttributeL2CacheSize under ROCm)
ATTR_L2 = "cudaDevAttrL2CacheSize"
#: where the runtime does not say its L2: a cache taken larger than it can be (bytes), so that
#: the guard holds only copies that cannot fit (a guess on the safe side, not a measurement)
L2_UNKNOWN_BYTES = 256 << 20

#: the SM paths' kernels, one source for CUDA (NVRTC) and ROCm (hiprtc, cupy's RawModule there),
#: with LOAD/STORE the platform's (kernel_source).  A warp is ``warpSize`` lanes: 32 on NVIDIA,
#: 64 on CDNA's wavefronts (MI250X); nothing here assumes either.
KERNELS = r"""
typedef unsigned long long u64;
extern "C" __global__ void copy16(u64 src, u64 dst, u64 n) {
    const ulonglong2* s = (const ulonglong2*)src;
    ulonglong2* d = (ulonglong2*)dst;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) d[i] = s[i];
}
extern "C" __global__ void bidir16(u64 h_src, u64 d_dst, u64 d_src, u64 h_dst, u64 n) {
    // even warps host -> device, odd warps device -> host, in every block (nvbandwidth's split-warp
    // copy, kernels.cu splitWarpCopyKernel): both directions share every multiprocessor; 16 bytes a
    // thread over a grid of 2n threads (a multiple of two warps: BLOCK)
    u64 lanes = warpSize;
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 warp = g / lanes, lane = g % lanes;
    bool up = (warp & 1) == 0;
    const uint4* s = (const uint4*)(up ? h_src : d_src);
    uint4* d = (uint4*)(up ? d_dst : h_dst);
    u64 stride = ((u64)gridDim.x * blockDim.x) >> 1;
    for (u64 i = (warp >> 1) * lanes + lane; i < n; i += stride) STORE(d + i, LOAD(s + i));
}
"""
#: CUDA: cached in L2 only (ld.cg / st.cg: the CUDA C++ Programming Guide's load and store
#: functions using cache hints), as the references were measured
CUDA_MEMORY_OPS = "#define LOAD(p) __ldcg(p)\n#define STORE(p, v) __stcg((p), (v))\n"
#: HIP has none of CUDA's cache-hint load/store functions (__ldcg, __stcg, ...): plain ones
HIP_MEMORY_OPS = "#define LOAD(p) (*(p))\n#define STORE(p, v) (*(p) = (v))\n"


def kernel_source(hip):
    """The SM paths' kernels for CUDA (``hip`` false) or ROCm."""
    return (HIP_MEMORY_OPS if hip else CUDA_MEMORY_OPS) + KERNELS


def parse_path(path):
    """'h2d-ce' -> ('h2d', 'ce')."""
    direction, _, engine = path.partition("-")
    return direction, engine


def memlock_limit():
    """RLIMIT_MEMLOCK's soft limit in bytes, None for unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return None if soft == resource.RLIM_INFINITY else soft


def has_ipc_lock(status="/proc/self/status"):
    """Whether this process may lock memory past RLIMIT_MEMLOCK (CAP_IPC_LOCK effective)."""
    try:
        with open(status) as fp:
            caps = next(line for line in fp if line.startswith("CapEff:"))
        return bool(int(caps.split()[1], 16) >> CAP_IPC_LOCK & 1)
    except (OSError, StopIteration, ValueError, IndexError):
        return False


def device_attribute(runtime, name, device):
    """A device attribute by its name in cupy's runtime (ATTR_*), or None where the runtime has
    no such name, refuses it or answers 0."""
    try:
        return runtime.deviceGetAttribute(getattr(runtime, name), device) or None
    except Exception:  # a runtime without the attribute's name, or that refuses it
        return None


def hbm_peak_GBps(runtime, device):
    """The device memory's peak (GB/s, both directions together) from its clock and bus width
    (double data rate), or None where the runtime does not say."""
    clock_khz = device_attribute(runtime, ATTR_MEMORY_CLOCK, device)
    width = device_attribute(runtime, ATTR_BUS_WIDTH, device)
    return 2 * clock_khz * 1e3 * width / 8 / 1e9 if clock_khz and width else None


def l2_cache_bytes(runtime, device):
    """The device's L2 cache in bytes, or None where the runtime does not say."""
    size = device_attribute(runtime, ATTR_L2, device)
    return int(size) if size else None


class DataPaths(Operation):
    name = GPU_DATAPATHS
    min_ranks = 1
    has_cases = True
    fits_memory = False  # buffer_bytes allocates, after its own memory check

    @staticmethod
    def add_arguments(parser):
        """The operation's own options (payload.cli: its op_args)."""
        parser.add_argument("--paths", default=",".join(DATAPATHS),
                            help=f"comma-separated, of {', '.join(DATAPATHS)} (default: all)")
        parser.add_argument("--host-numa", choices=HOST_NUMA, default=NEAR,
                            help="host memory on the GPU's own NUMA node, the farthest one with CPUs, "
                                 "or both (default near)")
        parser.add_argument("--numa-node", type=int, default=None, metavar="N",
                            help="host memory on NUMA node N instead (every GPU)")
        parser.add_argument("--pageable", action="store_true",
                            help="pageable host memory instead of pinned: copy-engine paths only")

    option_names = ("paths", "host_numa", "numa_node", "pageable")

    def __init__(self, ctx, method):
        super().__init__(ctx, method)
        if method.name != STAGING:
            raise collective(CapabilityError(f"{GPU_DATAPATHS} measures a GPU's copies to and from its "
                                             f"host: run it with --method {STAGING}"))
        if not self.be.is_device:
            raise collective(CapabilityError(f"{GPU_DATAPATHS} needs a GPU (--backend cupy)"))
        args = ctx.op_args
        paths = [p.strip() for p in (args.get("paths") or ",".join(DATAPATHS)).split(",") if p.strip()]
        self.pageable = bool(args.get("pageable"))
        self.skipped = {}
        if self.pageable:
            for p in paths:
                if parse_path(p)[1] == "sm":
                    self.skipped[p] = "pageable host memory: a kernel reaches mapped pinned memory only"
            paths = [p for p in paths if p not in self.skipped]
        self.paths = paths
        self.host = NumpyBackend()
        self.rt = self.be.runtime
        self.bus = self.be.pci_bus_id()
        self.gpu = ctx.rank
        self._numa_choice(args.get("host_numa") or NEAR, args.get("numa_node"))
        # every rank's GPU (index = rank), its bus id, the memory's peak and the L2 cache, for the records
        self.buses = ctx.comm.allgather(self.bus)
        self.hbm_limits = ctx.comm.allgather(hbm_peak_GBps(self.rt, self.be.device))
        self.l2_sizes = ctx.comm.allgather(l2_cache_bytes(self.rt, self.be.device))
        self.link_nominal = ctx.comm.allgather(nominal_pcie_GBps(self.bus))
        self.slow = slow_gpu_request()
        # the copies time as device work on the rank's stream (side streams join it): events
        method.device_timer = True
        self.buffers = {}
        self.case = None

    def _numa_choice(self, host_numa, numa_node):
        """{label: node} of the host memory to measure from, on this rank's GPU."""
        nodes = cpu_nodes()
        if numa_node is not None:
            if numa_node not in nodes:
                have = ",".join(map(str, nodes)) or "none (no NUMA information)"
                raise collective(GpucommError(f"--numa-node {numa_node}: no such NUMA node with CPUs "
                                              f"on this host (nodes: {have})"))
            self.numa = {f"node{numa_node}": numa_node}
            return
        near = gpu_node(self.bus)
        far = farthest(near) if near is not None else None
        wanted = (NEAR, FAR) if host_numa == "both" else (host_numa,)
        self.numa = {label: {NEAR: near, FAR: far}[label] for label in wanted}

    @classmethod
    def check_ranks(cls, nranks):
        return None  # one GPU is enough; one rank per GPU of the node

    @classmethod
    def check_options(cls, op_args):
        paths = [p.strip() for p in (op_args.get("paths") or ",".join(DATAPATHS)).split(",") if p.strip()]
        if not paths or any(p not in DATAPATHS for p in paths):
            return f"--paths {op_args.get('paths')!r}: choose from {', '.join(DATAPATHS)}"
        return None

    @staticmethod
    def check_sizes(sizes):
        bad = [s for s in sizes if s < 16 or s % 16]
        if bad:
            raise collective(GpucommError(f"{GPU_DATAPATHS}: sizes must be multiples of 16 B (the "
                                          f"kernel's loads), not {', '.join(map(str, bad))}"))

    def host_paths(self):
        return [p for p in self.paths if p != DATAPATH_LOCAL]

    def buffer_bytes(self, max_size):
        """Before any allocation: the sizes against the GPU's and the host's free memory and
        ulimit -l (one line each), then the operation's own buffers (two on the device, two of
        host memory per NUMA choice); the engine's buffers are left a byte each."""
        comm = self.ctx.comm
        labels = len(self.numa) if self.host_paths() else 0
        need_dev, need_host = 3 * max_size, (2 * labels + 1) * max_size if labels else 0
        problem = None
        free = self.be.free_bytes()
        room = self.host.free_bytes(self.ctx.local_size)
        lock = memlock_limit()
        if free is not None and need_dev > free:
            problem = (f"--sizes up to {max_size} B needs {need_dev / 2**30:.2f} GiB on GPU {self.gpu} "
                       f"({self.bus}), it has {free / 2**30:.2f} GiB free: choose smaller sizes")
        elif room is not None and need_host > room:
            problem = (f"--sizes up to {max_size} B needs {need_host / 2**30:.2f} GiB of host memory per "
                       f"GPU, the node has {room / 2**30:.2f} GiB free per rank: choose smaller sizes")
        elif labels and not self.pageable and lock is not None and lock < 2 * labels * max_size \
                and not has_ipc_lock():
            problem = (f"ulimit -l is {lock // 1024} KiB: pinned host memory of {2 * labels * max_size} B "
                       "cannot be locked; raise it (ulimit -l unlimited; Slurm: PropagateResourceLimits) "
                       "or measure pageable memory with --pageable")
        problems = [p for p in comm.allgather(problem) if p]
        if problems:
            raise collective(GpucommError(problems[0]))
        self._allocate(max_size)
        return 1, 1

    def _allocate(self, size):
        be, rt = self.be, self.rt
        self.dev = [be.empty(size), be.empty(size)]
        self.hosts, error = {}, None
        try:
            for label, node in self.numa.items() if self.host_paths() else ():
                pair = [HostBuffer(size, node), HostBuffer(size, node)]
                self.hosts[label] = pair
                for buf in pair:
                    if not self.pageable:
                        rt.hostRegister(buf.ptr, size, REGISTER_FLAGS)
                        buf.registered = True
                        buf.dptr = self._device_pointer(buf.ptr)
        except Exception as exc:  # the driver's refusal to pin (cudaErrorMemoryAllocation ...)
            error = (f"pinning {size} B of host memory failed ({type(exc).__name__}: {exc}); "
                     f"ulimit -l is {memlock_limit() or 'unlimited'}: raise it or use --pageable")
        errors = [e for e in self.ctx.comm.allgather(error) if e]
        if errors:
            raise collective(CapabilityError(errors[0]))
        self.kernels = None
        if any(parse_path(p)[1] == "sm" for p in self.paths):
            module = self.be.xp.RawModule(code=kernel_source(self.be.is_hip))
            self.kernels = module.get_function("copy16"), module.get_function("bidir16")
            sms = rt.getDeviceProperties(be.device)["multiProcessorCount"]
            self.max_blocks = sms * BLOCKS_PER_SM
        cuda = be.xp.cuda
        self.side = [cuda.Stream(non_blocking=True), cuda.Stream(non_blocking=True)]
        self.events = [cuda.Event(disable_timing=True) for _ in range(3)]

    def _device_pointer(self, ptr):
        get = getattr(self.rt, "hostGetDevicePointer", None)
        return int(get(ptr, 0)) if get else ptr  # unified addressing: the host address

    def meta(self):
        mine = {"gpu": self.gpu, "bus_id": self.bus, "link_nominal_GBps": self.link_nominal[self.gpu],
                "hbm_peak_GBps": self.hbm_limits[self.gpu], "l2_bytes": self.l2_sizes[self.gpu],
                "numa": {label: {"node": node,
                                 "binding": pair[0].binding if (pair := self.hosts.get(label)) else None,
                                 "pages_on": pair[0].verified if pair else None}
                         for label, node in self.numa.items()}}
        meta = {"paths": self.paths, "host_memory": "pageable" if self.pageable else "pinned (registered, mapped)",
                "gpus": self.ctx.comm.allgather(mine), "numa_nodes_with_cpus": cpu_nodes()}
        if self.skipped:
            meta["paths_skipped"] = self.skipped
        if self.slow:
            meta["test_hook"] = f"{SLOW_GPU}={self.slow[0]}:{self.slow[1]:g}"
        return meta

    def cases(self, sizes):
        n = self.ctx.nranks
        for size in sizes:
            for path in self.paths:
                for label in (self.numa if path != DATAPATH_LOCAL else ("device",)):
                    for g in range(n):
                        yield size, {"path": path, "numa": label, "scope": "single", "gpu": g,
                                     "bus_id": self.buses[g]}
                    if n > 1:
                        yield size, {"path": path, "numa": label, "scope": "all"}

    def case_label(self, case):
        who = f"gpu {case['gpu']} ({case['bus_id']})" if case["scope"] == "single" else "all gpus"
        return f"{case['path']} {case['numa']} {who}"

    def select(self, case):
        self.case = case
        self.direction, self.engine = parse_path(case["path"])
        self.active = case["scope"] == "all" or case["gpu"] == self.gpu
        self.hostbufs = self.hosts.get(case["numa"])
        self.direction_events = []

    def _plan(self, size):
        """[(kind, dst, src)] of one iteration: kind h2d, d2h, d2d; host ends are HostBuffers."""
        (da, db), hb = self.dev, self.hostbufs
        if self.direction == "h2d":
            return [("h2d", da, hb[0])]
        if self.direction == "d2h":
            return [("d2h", hb[0], da)]
        if self.direction == "bidir":
            return [("h2d", da, hb[0]), ("d2h", hb[1], db)]
        return [("d2d", db, da)]

    def prepare(self, size):
        if not self.active:
            return
        be, self.expect = self.be, []
        for i, (kind, dst, src) in enumerate(self._plan(size)):
            seed = pattern_seed(self.gpu, size, DATAPATHS.index(self.case["path"]) * 2 + i + 1)
            if kind == "h2d":
                src.array[:size] = self.host.pattern(size, seed)
                dst[:size] = 0
                self.expect.append((dst, be.pattern(size, seed), be, "device"))
            else:
                src[:size] = be.pattern(size, seed)
                if kind == "d2h":
                    dst.array[:size] = 0
                    self.expect.append((dst.array, self.host.pattern(size, seed), self.host, "host"))
                else:
                    dst[:size] = 0
                    self.expect.append((dst, be.pattern(size, seed), be, "device"))
        be.synchronize()

    def _copy(self, kind, dst, src, size, stream):
        d = dst.data.ptr if kind != "d2h" else dst.ptr
        s = src.data.ptr if kind != "h2d" else src.ptr
        self.rt.memcpyAsync(d, s, size, {"h2d": H2D, "d2h": D2H, "d2d": D2D}[kind], stream.ptr)

    def _issue(self, size, n, timed=False):
        """``n`` iterations queued; every stream used joins the rank's stream at the end.
        ``timed``: the copy engines' bidirectional sample also times each direction with its
        own events (start on the rank's stream, end on the direction's), read in reduce_times."""
        main, plan = self.be.stream, self._plan(size)
        if self.engine == "sm":
            copy16, bidir16 = self.kernels
            n16 = np.uint64(size // 16)
            blocks = int(min(self.max_blocks, -(-(size // 16) // BLOCK)))

            def ptr(buf, kind_host):
                return np.uint64(buf.dptr if kind_host else buf.data.ptr)

            if len(plan) == 2:
                (_, dd, hs), (_, hd, ds) = plan
                args = (ptr(hs, True), ptr(dd, False), ptr(ds, False), ptr(hd, True), n16)
                grid = max(1, -(-2 * (size // 16) // BLOCK))  # one thread per 16 bytes each way
                for _ in range(n):
                    bidir16((grid,), (BLOCK,), args, stream=main)
            else:
                kind, dst, src = plan[0]
                args = (ptr(src, kind == "h2d"), ptr(dst, kind == "d2h"), n16)
                for _ in range(n):
                    copy16((blocks,), (BLOCK,), args, stream=main)
            return
        if len(plan) == 1:
            for _ in range(n):
                self._copy(*plan[0], size, main)
            return
        cuda = self.be.xp.cuda
        start, done = (cuda.Event(), [cuda.Event(), cuda.Event()]) if timed else (self.events[0], self.events[1:])
        start.record(main)
        for (kind, dst, src), stream, ev in zip(plan, self.side, done):
            stream.wait_event(start)
            for _ in range(n):
                self._copy(kind, dst, src, size, stream)
            ev.record(stream)
            main.wait_event(ev)
        if timed:
            self.direction_events.append((start, done, n))

    def step(self, size):
        if self.active:
            self._issue(size, 1)
            self.be.stream.synchronize()

    def loop(self, size, n):
        if self.active:
            self._issue(size, n, timed=True)

    def _direction_medians(self):
        """(h2d, d2h) median seconds per iteration of this rank's bidirectional copy-engine
        samples, each direction timed alone; None elsewhere."""
        if not self.direction_events:
            return None
        elapsed = self.be.xp.cuda.get_elapsed_time
        per = np.array([[elapsed(start, ev) * 1e-3 / n for ev in done]
                        for start, done, n in self.direction_events])
        self.direction_events = []
        return tuple(float(np.median(per[:, i])) for i in range(2))

    def reduce_times(self, times):
        everyone = np.array(self.ctx.comm.allgather(times))
        directions = self.ctx.comm.allgather(self._direction_medians())
        if self.slow and self.slow[0] < len(everyone):
            everyone[self.slow[0]] /= self.slow[1]  # test hook: this GPU at FACTOR of its speed
            if directions[self.slow[0]]:
                directions[self.slow[0]] = tuple(t / self.slow[1] for t in directions[self.slow[0]])
        self.rank_times, self.rank_directions = everyone, directions
        if self.case["scope"] == "single":
            return everyone[self.case["gpu"]].copy()
        return everyone.max(axis=0)

    def validate(self, size):
        if not self.active:
            return None
        for dst, expected, be, where in self.expect:
            got = dst[:size]
            bad = be.first_mismatch(got, expected)
            if bad >= 0:
                return (f"GPU {self.gpu} ({self.bus}): {self.case['path']} {self.case['numa']} at {size} B: "
                        f"the {where} destination is wrong at offset {bad} (got {int(got[bad])}, "
                        f"expected {int(expected[bad])})")
        return None

    def corrupt(self, size):
        if self.active and self.expect:
            self.expect[0][0][size // 2] = 0
            self.be.synchronize()

    def _each_direction(self, size, gpu):
        """{h2d_GBps, d2h_GBps}: each direction of a bidirectional copy-engine case, timed by its
        own events (the medians; as nvbandwidth's *_bidirectional_memcpy_ce time each one)."""
        times = self.rank_directions[gpu] if self.rank_directions else None
        if not times:
            return {}
        return {f"{d}_GBps": datapath_GBps(d, size, t)["goodput_GBps"] for d, t in zip(("h2d", "d2h"), times)}

    def metrics(self, size, time_s):
        path = self.case["path"]
        out = datapath_GBps(parse_path(path)[0], size, time_s)
        if self.case["scope"] == "single":
            out.update(self._each_direction(size, self.case["gpu"]))
        else:
            out["gpu_results"] = []
            for g, row in enumerate(self.rank_times):
                t = float(np.median(row))
                out["gpu_results"].append({"gpu": g, "bus_id": self.buses[g], "time_us": t * 1e6,
                                           **datapath_GBps(parse_path(path)[0], size, t),
                                           **self._each_direction(size, g)})
        self._hold_to_memory_peak(path, size, out.get("hbm_GBps"))
        return out

    def _hold_to_memory_peak(self, path, size, hbm_GBps):
        """A local copy larger than the L2 cache above the memory's peak is a measurement bug."""
        limit = min(filter(None, self.hbm_limits), default=None)
        cache = max(filter(None, self.l2_sizes), default=L2_UNKNOWN_BYTES)
        if path == DATAPATH_LOCAL and limit and hbm_GBps and size > cache and hbm_GBps > limit:
            raise collective(PlausibilityError(
                f"{path} at {size} B: {hbm_GBps:.1f} GB/s read + write is above the device "
                f"memory's peak {limit:.1f} GB/s (clock x bus width), the copy larger than the "
                f"L2 cache ({cache} B): a measurement bug"))

    def summary(self, records):
        """Rank 0's table: per path and NUMA choice, each GPU's goodput at every size."""
        lines = []
        for path in self.paths:
            for label in (self.numa if path != DATAPATH_LOCAL else ("device",)):
                rows = [r for r in records if r["path"] == path and r["numa"] == label]
                if not rows:
                    continue
                cells = ", ".join(f"{r['size']}B gpu{r.get('gpu', 'all')} {r['goodput_GBps']:.2f}"
                                  for r in rows)
                lines.append(f"datapaths {path} {label}: {cells} GB/s")
        return lines

