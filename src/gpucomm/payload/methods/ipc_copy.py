"""``ipc-copy``: CUDA/HIP IPC handles exchanged over MPI, then peer device-to-device copies
(the paper's "Device-Device Copy").

* point-to-point: push sendbuf[:n] into the peer's receive buffer with one copy-engine memcpy,
  then tell the peer (GPUCOMM_IPC_MODE=pull: the sender only tells, the receiver copies from
  the sender's buffer).  How the peer is told (GPUCOMM_IPC_SYNC, stated in the output as
  ``peer_sync``):
  - ``stream`` (default where the driver allows it): the sender's stream writes a count into a
    flag in the peer's memory after the copy, the peer's stream waits for it (streamsync.py);
    neither host waits inside the loop, as in a CUDA program that signals through memory;
  - ``host``: the sender synchronises its stream and sends a one-byte MPI message, the receiver
    waits for the message: a host round trip per transfer (several us, which shows at every
    size; the paper's scheme);
  - ``auto``: stream, else host with the reason in the output (all-to-all: host, OPT_IN_STREAM);
* all-to-all: every rank pushes block d into rank d's receive buffer (one stream per peer so
  the copies run concurrently);
* all-reduce: the paper's naive scheme: rank 0 pulls every rank's buffer by peer copy, sums
  them on its GPU, pushes the result into every rank's receive buffer.

The collectives with stream flags are device work on the rank's stream (its side streams
forked from it and joined back), with no host in the iteration: the engine captures a sample's
iterations into one CUDA/HIP graph and times it with device events, as it does ccl's.  Their
flags are 0/1 handshakes that the waiting rank clears (the values a graph captures must hold
at every replay), two per pair and iteration (collective_step): "ready" (the receiver has
cleared what it waited on last time, so it may be written to and signalled again) and "data"
(the sender's copies into it are done).  With host signalling (GPUCOMM_IPC_SYNC=host, or flags
unavailable) the collectives are the paper's: driven from Python, every iteration ended by
stream synchronisations and an MPI barrier, host-timed.

Every rank must see the peers' GPUs (no per-rank CUDA_VISIBLE_DEVICES isolation) and the GPUs
must be able to access each other; the handles opened are those of the ranks the operation
exchanges with (its peers()), which must run on this rank's node.
"""

import os
from typing import Any

import numpy as np

from ...constants import ALLREDUCE, ALLTOALL, BW, IPC_COPY, MULTI_PINGPONG, PAIR_MATRIX, PINGPONG, TEST_IPC_REFUSED
from ...errors import CapabilityError, GpucommError
from ..faults import fire, ipc_refused
from ..streamsync import StreamFlags
from .base import Method

SYNC_MODES = ("auto", "stream", "host")
#: operations made of point-to-point transfers (send/recv/exchange): counts in the flags
P2P_OPS = (PINGPONG, BW, MULTI_PINGPONG, PAIR_MATRIX)
#: the collectives: 0/1 handshakes in the flags, the iteration a graph can capture
COLLECTIVES = (ALLREDUCE, ALLTOALL)
#: collectives whose stream path runs only where asked for (GPUCOMM_IPC_SYNC=stream): all-to-all's
#: graph of side-stream branches took 3.4-4.3 ms an iteration on one shared H200, 10-15 times the
#: host path (bench/results/2026-12-05-nvidia-h200/52-ipc-device-driven); its single-peer chain is
#: not measured yet
OPT_IN_STREAM = (ALLTOALL,)
OPT_IN_NOTE = "host (all-to-all: stream flags only with GPUCOMM_IPC_SYNC=stream, not yet measured faster)"
#: the two flags of a pair in a collective (a flag's slot: kind * nranks + source rank)
READY, DATA = 0, 1


def warmup_floor(nbytes):
    """Untimed iterations a device-driven collective needs before its graph is timed, by size
    (the first compiles the reduction, maps the peers' memory and ramps the clocks; latency-
    bound sizes need many to reach a steady state): about a millisecond or more of the path."""
    if nbytes <= 64 << 10:
        return 100
    if nbytes <= 1 << 20:
        return 50
    return 10


class SideStreams:
    """One stream per peer, forked from the rank's stream and joined back into it by events:
    the peers' copies run concurrently, and a graph captures them as parallel branches."""

    def __init__(self, be, n):
        cuda = be.xp.cuda
        self.main = be.stream
        self.streams = [cuda.Stream(non_blocking=True) for _ in range(n)]
        self._fork = cuda.Event(disable_timing=True)
        self._joins = [cuda.Event(disable_timing=True) for _ in range(n)]

    def fork(self):
        self._fork.record(self.main)
        for s in self.streams:
            s.wait_event(self._fork)

    def join(self):
        for s, ev in zip(self.streams, self._joins):
            ev.record(s)
            self.main.wait_event(ev)

    def synchronize(self):
        for s in self.streams:
            s.synchronize()


def sync_request():
    mode = os.environ.get("GPUCOMM_IPC_SYNC", "auto").strip().lower() or "auto"
    if mode not in SYNC_MODES:
        raise GpucommError(f"bad GPUCOMM_IPC_SYNC={mode!r}: expected one of {', '.join(SYNC_MODES)}")
    return mode


class IpcCopyMethod(Method):
    name = IPC_COPY
    backends = ("cupy",)
    #: the peers' buffers this rank opened (setup), closed by close
    _opened = ()
    #: all-to-all's side streams (SideStreams) and all-reduce's rows on rank 0 (prepare)
    side: Any = None
    stack: Any = None

    def setup(self, sendbuf, recvbuf):
        super().setup(sendbuf, recvbuf)
        rt = self.be.runtime
        error = None
        self.sync_mode = sync_request()
        self.on_stream, self.peer_sync = False, "host"
        flagged = self.sync_mode != "host" and self.ctx.op_name in P2P_OPS + COLLECTIVES
        if self.ctx.op_name in OPT_IN_STREAM and self.sync_mode == "auto":
            flagged, self.peer_sync = False, OPT_IN_NOTE
        flag_handle, flag_error = self._make_flags() if flagged else (None, None)
        try:
            mine = (bytes(rt.ipcGetMemHandle(sendbuf.data.ptr)), bytes(rt.ipcGetMemHandle(recvbuf.data.ptr)),
                    flag_handle)
        except Exception as exc:
            mine, error = None, f"ipcGetMemHandle failed: {exc}"
        handles = self.comm.allgather(mine)
        self.peer_send, self.peer_recv, self.peer_flags, self._opened = {}, {}, {}, []
        peers = self.ctx.comm_peers  # only the ranks the operation exchanges with
        error = error or self._open_peers(peers, handles)
        errors = [e for e in self.comm.allgather(error) if e]
        if errors:
            self.close()
            msg = errors[0]
            raise CapabilityError(msg if msg.startswith("rank ") else f"CUDA/HIP IPC unavailable: {msg}")
        self.peer_send[self.ctx.rank] = sendbuf.data.ptr
        self.peer_recv[self.ctx.rank] = recvbuf.data.ptr
        if flagged:
            self._setup_flags(peers, handles, flag_error)
        mode = os.environ.get("GPUCOMM_IPC_MODE", "push").strip().lower() or "push"
        if mode not in ("push", "pull"):
            raise GpucommError(f"bad GPUCOMM_IPC_MODE={mode!r}: expected push or pull")
        self.pull = mode == "pull"

    def _make_flags(self):
        """This rank's stream flags (point-to-point: one 32-bit count per source rank, how many
        transfers it has signalled to us; collectives: a READY and a DATA flag per source rank)
        and their IPC handle: (handle, None), or (None, why not)."""
        try:
            self.flags = StreamFlags(self.be.is_hip)
            self.flag_buf = self.be.empty(max(512, 4 * 2 * self.ctx.nranks))
            self.flag_buf.fill(0)
            self.be.synchronize()
            self.flag_ptr = self.flag_buf.data.ptr
            return bytes(self.be.runtime.ipcGetMemHandle(self.flag_ptr)), None
        except Exception as exc:
            return None, f"{exc} (rank {self.ctx.rank})"

    def _open_peers(self, peers, handles):
        """Open every peer's send and receive buffers (its IPC handles): None, or why not (a
        peer on another node, the driver's refusal)."""
        rt = self.be.runtime
        away = [p for p in peers if not self.ctx.same_host(p)]
        if away:
            return (f"rank {away[0]} runs on another node: IPC copies move data between the "
                    "GPUs of one node only")
        # test hook (payload.faults): the driver's refusal on that rank, through the same path
        refused = ipc_refused(self.ctx.rank)
        for peer in peers:
            try:
                if refused:
                    fire(TEST_IPC_REFUSED)
                    raise RuntimeError("cudaErrorInvalidDevice: invalid device ordinal "
                                       "(GPUCOMM_TEST_IPC_REFUSED)")
                for table, handle in zip((self.peer_send, self.peer_recv), handles[peer][:2]):
                    table[peer] = rt.ipcOpenMemHandle(handle, rt.cudaIpcMemLazyEnablePeerAccess)
                    self._opened.append(table[peer])
            except Exception as exc:
                return (f"rank {self.ctx.rank}: CUDA/HIP IPC unavailable: cannot open the IPC "
                        f"handle of rank {peer} (GPU not visible to this rank, or no peer "
                        f"access): {exc}")
        return None

    def _setup_flags(self, peers, handles, error):
        """Open the peers' flags and try one stream write into each and one wait; every rank
        agrees on stream or host signalling (auto falls back to host with the reason)."""
        rt, me = self.be.runtime, self.ctx.rank
        stream = self.be.stream.ptr
        if error is None:
            try:
                for peer in peers:
                    if handles[peer][2] is None:
                        raise CapabilityError(f"rank {peer} has no stream flag")
                    self.peer_flags[peer] = rt.ipcOpenMemHandle(handles[peer][2],
                                                                rt.cudaIpcMemLazyEnablePeerAccess)
                    self._opened.append(self.peer_flags[peer])
                    self.flags.write(stream, self.peer_flags[peer] + 4 * me, 0)
                self.flags.wait(stream, self.flag_ptr + 4 * me, 0)
                self.be.stream.synchronize()
            except Exception as exc:
                error = f"{exc} (rank {me})"
        errors = [e for e in self.comm.allgather(error) if e]
        if errors:
            if self.sync_mode == "stream":
                self.close()
                raise CapabilityError(f"GPUCOMM_IPC_SYNC=stream: {errors[0]}")
            self.peer_sync = f"host (stream flags unavailable: {errors[0]})"
            return
        self.on_stream, self.peer_sync = True, "stream"
        # every transfer is now device work on the rank's stream (copy, flag write, flag wait):
        # the engine may time it with device events (timers.py), as it does ccl
        self.device_timer = True
        self.signalled = {p: 0 for p in peers}  # counts written into each peer's flag for us
        self.awaited = {p: 0 for p in peers}    # counts we have waited for from each peer
        # a collective's iteration is all device work with fixed flag values: a graph can hold it
        self.graph_capable = self.ctx.op_name in COLLECTIVES

    def _signal(self, peer):
        self.signalled[peer] += 1
        self.flags.write(self.be.stream.ptr, self.peer_flags[peer] + 4 * self.ctx.rank, self.signalled[peer])

    def _await(self, peer):
        self.awaited[peer] += 1
        self.flags.wait(self.be.stream.ptr, self.flag_ptr + 4 * peer, self.awaited[peer])

    def sync(self):
        if self.on_stream:
            self.be.stream.synchronize()

    def _copy(self, dst_ptr, src_ptr, nbytes, stream=None):
        rt = self.be.runtime
        rt.memcpyAsync(dst_ptr, src_ptr, nbytes, rt.memcpyDefault, (stream or self.be.stream).ptr)

    def send(self, nbytes, peer):
        if self.on_stream:
            if not self.pull:
                self._copy(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
            self._signal(peer)
            return
        if not self.pull:
            self._copy(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
            self.be.stream.synchronize()
        self.notify(peer)

    def recv(self, nbytes, peer):
        if self.on_stream:
            self._await(peer)
            if self.pull:
                self._copy(self.recvbuf.data.ptr, self.peer_send[peer], nbytes)
            return
        self.wait_notify(peer)
        if self.pull:
            self._copy(self.recvbuf.data.ptr, self.peer_send[peer], nbytes)
            self.be.stream.synchronize()

    def send_window(self, nbytes, peer, window):
        """The bw operation's sender: ``window`` copies back to back on the stream, one flag
        for all of them, then wait for the receiver's (pull: one flag, the receiver copies)."""
        if self.on_stream:
            if not self.pull:
                for _ in range(window):
                    self._copy(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
            self._signal(peer)
            self._await(peer)
            return
        if not self.pull:
            for _ in range(window):
                self._copy(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
            self.be.stream.synchronize()
        self.notify(peer)
        self.wait_notify(peer)

    def recv_window(self, nbytes, peer, window):
        if self.on_stream:
            self._await(peer)
            if self.pull:
                for _ in range(window):
                    self._copy(self.recvbuf.data.ptr, self.peer_send[peer], nbytes)
            self._signal(peer)
            return
        self.wait_notify(peer)
        if self.pull:
            for _ in range(window):
                self._copy(self.recvbuf.data.ptr, self.peer_send[peer], nbytes)
            self.be.stream.synchronize()
        self.notify(peer)

    def exchange(self, nbytes, peer):
        """Both ranks push into each other's receive buffer at once, then tell each other
        (pull mode: tell first, then both copy from the other's send buffer)."""
        if self.on_stream:
            if self.pull:
                self._signal(peer)
                self._await(peer)
                self._copy(self.recvbuf.data.ptr, self.peer_send[peer], nbytes)
            else:
                self._copy(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
                self._signal(peer)
                self._await(peer)
            return
        if self.pull:
            self.notify_each_other(peer)
            self._copy(self.recvbuf.data.ptr, self.peer_send[peer], nbytes)
            self.be.stream.synchronize()
        else:
            self._copy(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
            self.be.stream.synchronize()
        self.notify_each_other(peer)

    def min_warmup(self, nbytes):
        """The fewest warm-up iterations of a size (the engine's hook): the device-driven
        collectives' warmup_floor; 0 (the engine's own count) elsewhere."""
        return warmup_floor(nbytes) if self.graph_capable else 0

    def prepare(self, nbytes):
        self.be.synchronize()
        n = self.ctx.nranks
        if self.ctx.op_name == ALLTOALL and self.side is None:
            self.side = SideStreams(self.be, n)
        if self.ctx.op_name == ALLREDUCE and self.ctx.rank == 0 and self.stack is None:
            count = self.sendbuf.nbytes // 4
            self.stack = self.be.empty(n * count * 4, dtype=np.float32).reshape(n, count)

    def _flag(self, base, kind, src):
        """The address of flag ``kind`` (READY, DATA) from rank ``src`` in the flags at ``base``."""
        return base + 4 * (kind * self.ctx.nranks + src)

    def _tell(self, peer, kind, stream=None):
        """Set flag ``kind`` of this rank in ``peer``'s memory, after the work queued before."""
        self.flags.write((stream or self.be.stream).ptr, self._flag(self.peer_flags[peer], kind, self.ctx.rank), 1)

    def _take(self, src, kind, stream=None):
        """Wait until ``src`` has set flag ``kind`` here, then clear it (before any work queued
        after it can lead ``src`` to set it again)."""
        ptr, addr = (stream or self.be.stream).ptr, self._flag(self.flag_ptr, kind, src)
        self.flags.wait(ptr, addr, 1)
        self.flags.write(ptr, addr, 0)

    def alltoall(self, block):
        if self.on_stream:
            self._alltoall_on_stream(block)
            return
        me = self.ctx.rank
        src = self.sendbuf.data.ptr
        for d in range(self.ctx.nranks):
            self._copy(self.peer_recv[d] + me * block, src + d * block, block, self.side.streams[d])
        self.side.synchronize()
        self.comm.Barrier()

    def _alltoall_on_stream(self, block):
        """Every peer is told this rank is ready; each peer's branch (a side stream where there
        are several) waits for that peer's READY, pushes its block and sets its DATA; the own
        block is copied on the rank's stream, which then waits for every peer's DATA."""
        me, src, peers = self.ctx.rank, self.sendbuf.data.ptr, self.ctx.peers()
        forked = len(peers) > 1  # one peer: its branch on the rank's stream (no fork, no join)
        for d in peers:
            self._tell(d, READY)
        if forked:
            self.side.fork()
        for d in peers:
            stream = self.side.streams[d] if forked else None
            self._take(d, READY, stream)
            self._copy(self.peer_recv[d] + me * block, src + d * block, block, stream)
            self._tell(d, DATA, stream)
        self._copy(self.recvbuf.data.ptr + me * block, src + me * block, block)
        if forked:
            self.side.join()
        for s in peers:
            self._take(s, DATA)

    def allreduce(self, count):
        if self.on_stream:
            self._allreduce_on_stream(count)
            return
        nbytes = count * 4
        if self.ctx.rank == 0:
            stack = self.stack
            row = stack.strides[0]
            for r in range(self.ctx.nranks):
                self._copy(stack.data.ptr + r * row, self.peer_send[r], nbytes)
            out = self.recvbuf[:nbytes].view(np.float32)
            self.be.xp.sum(stack[:, :count], axis=0, out=out)
            for r in self.ctx.peers():
                self._copy(self.peer_recv[r], self.recvbuf.data.ptr, nbytes)
            self.be.stream.synchronize()
        self.comm.Barrier()

    def _allreduce_on_stream(self, count):
        """Rank 0 waits for every peer's READY, pulls every buffer, sums them (row by row,
        element-wise: no reduction's scratch memory, which a graph could not allocate), pushes
        the sum and sets each peer's DATA; a peer sets its READY at rank 0 and waits for DATA."""
        if self.ctx.rank != 0:
            self._tell(0, READY)
            self._take(0, DATA)
            return
        nbytes, xp, stack, peers = count * 4, self.be.xp, self.stack, self.ctx.peers()
        for r in peers:
            self._take(r, READY)
        row = stack.strides[0]
        for r in range(self.ctx.nranks):
            self._copy(stack.data.ptr + r * row, self.peer_send[r], nbytes)
        out = self.recvbuf[:nbytes].view(np.float32)
        xp.add(stack[0, :count], stack[1, :count], out=out)
        for r in range(2, self.ctx.nranks):
            xp.add(out, stack[r, :count], out=out)
        for r in peers:
            self._copy(self.peer_recv[r], self.recvbuf.data.ptr, nbytes)
            self._tell(r, DATA)

    def close(self):
        for ptr in self._opened:
            try:
                self.be.runtime.ipcCloseMemHandle(ptr)
            except Exception:
                pass
        self._opened = []
