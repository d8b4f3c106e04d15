"""``nvshmem``: GPU-initiated communication, NVSHMEM puts with signals issued from inside CUDA
kernels (payload/nvshmem/kernels.cu, built with nvcc against NVSHMEM's device library and
loaded with ctypes: build.py, lib.py).

* Bootstrap: rank 0 makes an NVSHMEM unique id, mpi4py broadcasts its bytes, every rank calls
  NVSHMEM's init with (rank, size, id) on its own GPU; NVSHMEM_DISABLE_NVLS=1 (NVLink multicast
  off, constants.NO_MULTICAST_ENV), a symmetric heap large enough for the run
  (NVSHMEM_SYMMETRIC_SIZE, unless set larger) and, where every rank is on one host and the
  variable is unset, NVSHMEM_REMOTE_TRANSPORT=none are in the environment first.
* Buffers: the operation's send and receive buffers are NVSHMEM symmetric memory (the engine
  asks the method for them: ``allocate``), plus a symmetric array of 64-bit signal counters,
  SLOTS x nranks: slot s of source rank r at ``sig[s * nranks + r]``.
* A transfer: each block of the kernel's grid puts one chunk of the message
  (nvshmemx_putmem_signal_block) and adds 1 to the receiver's counter of this source after the
  data; the receiver waits until the counter reaches the total it expects.  Counters only grow
  (the host keeps the expected totals), so nothing is reset between iterations or sizes.
* ping-pong: the whole timed loop is ONE kernel on each rank (n round trips of put-with-signal
  and wait), so no host is in the loop; timed with device events around it.  bw: one kernel a
  window (``window`` puts, the last with the signal; the receiver's kernel acknowledges).
  all-to-all: one kernel, every rank puts its block into every rank (itself included) then
  waits for every source's chunks.  all-reduce: nvshmemx_float_sum_reduce_on_stream.
* Paths (GPUCOMM_NVSHMEM_PATH): ``kernel`` (the above at every size), ``stream``
  (host-initiated, stream-ordered nvshmemx_putmem_signal_on_stream and
  nvshmemx_signal_wait_until_on_stream: the copy engine moves the data between GPUs of a node),
  ``auto`` (default): kernel below STREAM_FROM, stream from it.  All-to-all is always the kernel.
  GPUCOMM_NVSHMEM_BLOCKS: the most blocks of a transfer (default DEFAULT_BLOCKS, at most one per
  SM so that every waiting block is resident).

Capability (a CapabilityError names the reason): NVIDIA GPUs only; NVSHMEM found, nvcc found
and the build succeeding (build.py); NVSHMEM's init; every peer on this rank's node reachable
by load/store (nvshmem_ptr: NVLink or PCIe peer access), peers on other nodes through
NVSHMEM's remote transport (NVSHMEM_REMOTE_TRANSPORT, set by the site's configuration).
"""

import os

from ...constants import NO_MULTICAST_ENV, NVSHMEM
from ...errors import CapabilityError, GpucommError
from ...sizes import parse_size
from .base import Method

#: signal slots: data arrivals (point-to-point), bw acknowledgements, all-to-all arrivals
SLOT_DATA, SLOT_ACK, SLOT_A2A = 0, 1, 2
SLOTS = 3
SIGNAL_BYTES = 8
#: a block carries at least this much of a message (fewer blocks for small messages)
MIN_CHUNK = 64 << 10
#: chunks start on 16-byte boundaries (NVSHMEM's widest stores)
ALIGN = 16
#: threads per block: one warp for latency-bound messages, 1024 for the rest
SMALL_BYTES, SMALL_THREADS, THREADS = 4096, 32, 1024
DEFAULT_BLOCKS = 32
#: auto path: the copy engine (stream-ordered puts) from this size up
STREAM_FROM = 16 << 20
PATHS = ("auto", "kernel", "stream")
#: symmetric heap beyond the buffers: signals, NVSHMEM's own scratch (reductions), alignment
HEAP_MARGIN = 256 << 20


def path_request(environ=None):
    env = os.environ if environ is None else environ
    mode = env.get("GPUCOMM_NVSHMEM_PATH", "auto").strip().lower() or "auto"
    if mode not in PATHS:
        raise GpucommError(f"bad GPUCOMM_NVSHMEM_PATH={mode!r}: expected one of {', '.join(PATHS)}")
    return mode


def blocks_request(environ=None):
    env = os.environ if environ is None else environ
    text = env.get("GPUCOMM_NVSHMEM_BLOCKS", "").strip()
    if not text:
        return DEFAULT_BLOCKS
    if not text.isdigit() or int(text) < 1:
        raise GpucommError(f"bad GPUCOMM_NVSHMEM_BLOCKS={text!r}: expected a whole number >= 1")
    return int(text)


def launch_shape(nbytes, max_blocks):
    """(blocks, chunk bytes, threads) of a transfer of ``nbytes``: block b carries bytes
    [b * chunk, (b + 1) * chunk) (the last ones may carry nothing but their signal)."""
    blocks = max(1, min(max_blocks, -(-nbytes // MIN_CHUNK)))
    chunk = -(-max(nbytes, 1) // blocks)
    chunk = -(-chunk // ALIGN) * ALIGN
    return blocks, chunk, (SMALL_THREADS if nbytes <= SMALL_BYTES else THREADS)


def alltoall_shape(block, nranks, max_blocks):
    """((grid blocks, chunk, threads), chunks per peer) of an all-to-all of ``block`` bytes per
    peer: every peer's block in up to max_blocks // nranks chunks; the grid at most max_blocks
    (blocks take the (peer, chunk) tasks in a stride)."""
    per_peer = max(1, min(max(1, max_blocks // nranks), -(-block // MIN_CHUNK)))
    chunk = -(-max(block, 1) // per_peer)
    chunk = -(-chunk // ALIGN) * ALIGN
    grid = min(max_blocks, per_peer * nranks)
    return (grid, chunk, SMALL_THREADS if block <= SMALL_BYTES else THREADS), per_peer


def heap_bytes(send_bytes, recv_bytes, nranks):
    """The symmetric heap the run needs (NVSHMEM_SYMMETRIC_SIZE)."""
    return send_bytes + recv_bytes + SLOTS * nranks * SIGNAL_BYTES + HEAP_MARGIN


def load_library(ctx):
    """The built kernels library for this rank's GPU (tests replace this with a stand-in)."""
    from ..nvshmem import build
    from ..nvshmem.lib import NvshmemLib
    build.nvshmem_home()  # the reasons that need no GPU first
    build.nvcc_path()
    be = ctx.backend
    arch = "sm_" + str(be.xp.cuda.Device(be.device).compute_capability)
    return NvshmemLib(build.library(arch), be)


class NvshmemMethod(Method):
    name = NVSHMEM
    backends = ("cupy",)
    #: every transfer is device work on the rank's stream: device events time it
    device_timer = True

    def __init__(self, ctx):
        super().__init__(ctx)
        if self.be.is_hip:
            raise CapabilityError("NVSHMEM is NVIDIA's: no nvshmem method on ROCm GPUs")
        self.mode = self._path_for_placement(path_request())
        self.max_blocks = blocks_request()
        self.lib, self.initialised, self._ptrs = None, False, []
        self.got = {}
        self.a2a_count = 0
        self.heap = None
        self.remote_transport = None     # NVSHMEM_REMOTE_TRANSPORT as its init saw it

    # ------------------------------------------------------------------ set-up

    def _path_for_placement(self, mode):
        """The path where ranks of one host share a GPU (--allow-shared-gpu): NVSHMEM runs such
        processes as "limited MPG" (multiple processes per GPU), where its stream-ordered API
        aborts the process ("Called NVSHMEM API not supported with limited MPG", NVSHMEM 3.4.5
        on one H200), so ``auto`` keeps to the kernel path and ``stream`` is refused."""
        ctx = self.ctx
        mine = ctx.placement[ctx.rank].device
        shared = any(r != ctx.rank and ctx.same_host(r) and p.device == mine
                     for r, p in enumerate(ctx.placement))
        if not shared:
            return mode
        if mode == "stream":
            raise CapabilityError("GPUCOMM_NVSHMEM_PATH=stream: NVSHMEM's stream-ordered API is not "
                                  "supported when ranks share a GPU (limited MPG); use one GPU per rank")
        return "kernel"

    def _agree(self, error):
        errors = [e for e in self.comm.allgather(error) if e]
        if errors:
            raise CapabilityError(errors[0])

    def _environment(self, send_bytes, recv_bytes):
        """NVSHMEM's environment, before its init: no multicast, a heap for the buffers."""
        for var, value in NO_MULTICAST_ENV.items():
            if var.startswith("NVSHMEM_"):
                os.environ[var] = value
        if "NVSHMEM_REMOTE_TRANSPORT" not in os.environ and all(
                self.ctx.same_host(r) for r in range(self.ctx.nranks)):
            os.environ["NVSHMEM_REMOTE_TRANSPORT"] = "none"  # one node: no network to probe
        self.remote_transport = os.environ.get("NVSHMEM_REMOTE_TRANSPORT", "NVSHMEM's default")
        need = heap_bytes(send_bytes, recv_bytes, self.ctx.nranks)
        given = os.environ.get("NVSHMEM_SYMMETRIC_SIZE", "").strip()
        try:
            have = parse_size(given) if given else 0
        except GpucommError:
            raise GpucommError(f"bad NVSHMEM_SYMMETRIC_SIZE={given!r}: expected a size such as 2G") from None
        if have < need:
            os.environ["NVSHMEM_SYMMETRIC_SIZE"] = str(need)
        self.heap = int(os.environ["NVSHMEM_SYMMETRIC_SIZE"]) if have < need else have

    def allocate(self, send_bytes, recv_bytes):
        """Collective: build/load the library, bootstrap NVSHMEM over MPI, allocate the
        symmetric buffers and signals; returns the (send, receive) arrays.  A refusal after
        NVSHMEM's init (every rank raises it: _agree) finalises NVSHMEM first."""
        try:
            return self._allocate(send_bytes, recv_bytes)
        except GpucommError:
            self.close()
            raise

    def _allocate(self, send_bytes, recv_bytes):
        ctx, comm = self.ctx, self.comm
        error = None
        try:
            self.lib = load_library(ctx)
        except CapabilityError as exc:
            error = f"rank {ctx.rank}: {exc}"
        self._agree(error)
        lib = self.lib
        uid, error = None, None
        if ctx.rank == 0:
            try:
                uid = lib.get_uid()
            except CapabilityError as exc:
                error = str(exc)
        self._agree(comm.bcast(error, root=0))
        uid = comm.bcast(uid, root=0)
        if not isinstance(uid, bytes) or len(uid) != lib.uid_size:
            raise CapabilityError(f"NVSHMEM unique id of {len(uid or b'')} bytes, expected {lib.uid_size}")
        self._environment(send_bytes, recv_bytes)
        error = None
        try:
            lib.init(ctx.rank, ctx.nranks, uid, self.be.device)
            self.initialised = True
        except CapabilityError as exc:
            error = f"rank {ctx.rank}: {exc}"
        self._agree(error)
        sms = lib.sm_count(self.be.device)
        if sms > 0:
            self.max_blocks = min(self.max_blocks, sms)
        self.sptr = self._malloc(send_bytes)
        self.rptr = self._malloc(recv_bytes)
        sig_bytes = SLOTS * ctx.nranks * SIGNAL_BYTES
        self.sig_ptr = self._malloc(sig_bytes)
        self.sig = lib.wrap(self.sig_ptr, sig_bytes)
        self.sig.fill(0)
        self.be.synchronize()
        comm.Barrier()  # every counter is zero before anyone signals
        self._check_reach()
        self.stream = self.be.stream.ptr if self.be.stream is not None else 0
        return lib.wrap(self.sptr, send_bytes), lib.wrap(self.rptr, recv_bytes)

    def _malloc(self, nbytes):
        error, ptr = None, 0
        try:
            ptr = self.lib.malloc(max(nbytes, 1))
            self._ptrs.append(ptr)
        except CapabilityError as exc:
            error = f"rank {self.ctx.rank}: {exc} (NVSHMEM_SYMMETRIC_SIZE={self.heap})"
        self._agree(error)
        return ptr

    def _check_reach(self):
        """Every peer on this node must be mapped by load/store (P2P over NVLink or PCIe)."""
        ctx, error = self.ctx, None
        for peer in ctx.comm_peers:
            if ctx.same_host(peer) and not self.lib.p2p(self.rptr, peer):
                error = (f"rank {ctx.rank}: no P2P path from its GPU to rank {peer}'s on the same node "
                         "(nvshmem_ptr is NULL: no NVLink/PCIe peer access), NVSHMEM cannot reach it")
                break
        self._agree(error)

    def meta(self):
        """The run's JSON meta: what this method was built and run with."""
        rule = {"auto": f"kernel below {STREAM_FROM} B, stream-ordered (copy engine) from it",
                "kernel": "kernel at every size", "stream": "stream-ordered at every size"}[self.mode]
        return {"nvshmem": {"version": self.lib.version() if self.lib else None, "path": self.mode,
                            "rule": rule, "max_blocks": self.max_blocks, "symmetric_size": self.heap,
                            "remote_transport": self.remote_transport,
                            "library": self.lib.path if self.lib else None}}

    # ------------------------------------------------------------------ helpers

    def _sig(self, slot, rank):
        return self.sig_ptr + SIGNAL_BYTES * (slot * self.ctx.nranks + rank)

    def _expect(self, slot, src, adds):
        """The counter of ``src`` in ``slot`` once ``adds`` more signals have arrived."""
        key = (slot, src)
        self.got[key] = self.got.get(key, 0) + adds
        return self.got[key]

    def _on_stream(self, nbytes):
        return self.mode == "stream" or (self.mode == "auto" and nbytes >= STREAM_FROM)

    def _adds(self, nbytes):
        """Signals one message of ``nbytes`` adds at its receiver (one per block of the kernel)."""
        return 1 if self._on_stream(nbytes) else launch_shape(nbytes, self.max_blocks)[0]

    # ------------------------------------------------------------------ point-to-point

    def _pingpong(self, nbytes, peer, first, n):
        if self._on_stream(nbytes):
            for _ in range(n):
                if first:
                    self.send(nbytes, peer)
                    self.recv(nbytes, peer)
                else:
                    self.recv(nbytes, peer)
                    self.send(nbytes, peer)
            return
        shape = launch_shape(nbytes, self.max_blocks)
        base = self.got.get((SLOT_DATA, peer), 0)
        self._expect(SLOT_DATA, peer, n * shape[0])
        me = self.ctx.rank
        self.lib.pingpong(self.rptr, self.sptr, nbytes, shape, self._sig(SLOT_DATA, me),
                          self._sig(SLOT_DATA, peer), peer, first, n, base, self.stream)

    def ping_loop(self, nbytes, peer, n):
        self._pingpong(nbytes, peer, True, n)

    def answer_loop(self, nbytes, peer, n):
        self._pingpong(nbytes, peer, False, n)

    def send_then_recv(self, nbytes, peer):
        self._pingpong(nbytes, peer, True, 1)

    def recv_then_send(self, nbytes, peer):
        self._pingpong(nbytes, peer, False, 1)

    def send(self, nbytes, peer):
        sig = self._sig(SLOT_DATA, self.ctx.rank)
        if self._on_stream(nbytes):
            self.lib.put_stream(self.rptr, self.sptr, nbytes, sig, peer, self.stream)
        else:
            self.lib.put(self.rptr, self.sptr, nbytes, launch_shape(nbytes, self.max_blocks), sig, peer,
                         self.stream)

    def recv(self, nbytes, peer):
        want = self._expect(SLOT_DATA, peer, self._adds(nbytes))
        if self._on_stream(nbytes):
            self.lib.wait_stream(self._sig(SLOT_DATA, peer), want, self.stream)
        else:
            self.lib.wait(self._sig(SLOT_DATA, peer), want, self.stream)

    def exchange(self, nbytes, peer):
        self.send(nbytes, peer)
        self.recv(nbytes, peer)

    def send_window(self, nbytes, peer, window):
        me = self.ctx.rank
        ack_want = self._expect(SLOT_ACK, peer, 1)
        if self._on_stream(nbytes):
            for _ in range(window - 1):
                self.lib.put_nosignal_stream(self.rptr, self.sptr, nbytes, peer, self.stream)
            self.lib.put_stream(self.rptr, self.sptr, nbytes, self._sig(SLOT_DATA, me), peer, self.stream)
            self.lib.wait_stream(self._sig(SLOT_ACK, peer), ack_want, self.stream)
            return
        self.lib.bw_send(self.rptr, self.sptr, nbytes, launch_shape(nbytes, self.max_blocks),
                         self._sig(SLOT_DATA, me), self._sig(SLOT_ACK, peer), peer, window, ack_want,
                         self.stream)

    def recv_window(self, nbytes, peer, window):
        me = self.ctx.rank
        want = self._expect(SLOT_DATA, peer, self._adds(nbytes))
        if self._on_stream(nbytes):
            self.lib.wait_stream(self._sig(SLOT_DATA, peer), want, self.stream)
            self.lib.signal_stream(self._sig(SLOT_ACK, me), peer, self.stream)
            return
        self.lib.bw_recv(self._sig(SLOT_DATA, peer), want, self._sig(SLOT_ACK, me), peer, self.stream)

    # ------------------------------------------------------------------ collectives

    def alltoall(self, block):
        shape, per_peer = alltoall_shape(block, self.ctx.nranks, self.max_blocks)
        self.a2a_count += per_peer
        self.lib.alltoall(self.rptr, self.sptr, block, shape, per_peer, self._sig(SLOT_A2A, 0),
                          self.ctx.rank, self.ctx.nranks, self.a2a_count, self.stream)

    def allreduce(self, count):
        self.lib.allreduce_f32(self.rptr, self.sptr, count, self.stream)

    # ------------------------------------------------------------------ the rest

    def prepare(self, nbytes):
        self.be.synchronize()

    def sync(self):
        if self.be.stream is not None:
            self.be.stream.synchronize()
        if self.lib is not None:
            self.lib.quiet()

    def close(self):
        """Collective (every rank reaches it: the engine agrees on every error first)."""
        lib, self.lib = self.lib, None
        if lib is None or not self.initialised:
            return
        try:
            self.sync_quietly()
            for ptr in reversed(self._ptrs):
                lib.free(ptr)
            lib.finalize()
        except Exception:
            pass
        self._ptrs, self.initialised = [], False

    def sync_quietly(self):
        try:
            self.be.synchronize()
        except Exception:
            pass
