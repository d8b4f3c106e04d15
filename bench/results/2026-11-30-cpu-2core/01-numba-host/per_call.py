"""What one compiled call per round trip costs against mpi4py's persistent requests (the question
for staging, whose iteration has Python device copies around its MPI calls, so only one compiled
call per message could replace its MPI calls): host ping-pong at 8 B, three loops alternating,
ROUNDS rounds of SAMPLES samples of 20 round trips; median us per half round trip.
Usage: mpirun -np 2 python per_call.py [ROUNDS] [SAMPLES]  (PYTHONPATH=src)"""
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

from gpucomm.payload import fastloop

comm = MPI.COMM_WORLD
rank, peer = comm.rank, 1 - comm.rank
rounds, samples = (int(a) for a in (sys.argv[1:] + ["5", "500"])[:2]) if len(sys.argv) > 1 else (5, 500)
f = fastloop.load(MPI, comm)
s, r = np.zeros(8, np.uint8), np.zeros(8, np.uint8)
args = (fastloop.address(s), fastloop.address(r), 8, f.byte_h, peer, 101, f.comm_h, fastloop.address(f.status))
fn = f.ping if rank == 0 else f.answer
sreq = comm.Send_init([s, 8, MPI.BYTE], peer, 101)
rreq = comm.Recv_init([r, 8, MPI.BYTE], peer, 101)


def mpi4py_persistent(n):  # the mpi4py loop's calls per round trip, started and waited in Python
    first = (sreq, rreq) if rank == 0 else (rreq, sreq)
    for _ in range(n):
        for req in first:
            req.Start()
            req.Wait()


def compiled_per_call(n):  # one compiled call per round trip
    for _ in range(n):
        fn(*args, 1)


def compiled_loop(n):  # the fast path: one compiled call per sample
    fn(*args, n)


loops = {"mpi4py persistent": mpi4py_persistent, "compiled call per round trip": compiled_per_call,
         "compiled loop per sample": compiled_loop}
result = {k: [] for k in loops}
for _ in range(rounds):
    for name, loop in loops.items():
        for _ in range(20):
            comm.Barrier()
            loop(20)
        ts = []
        for _ in range(samples):
            comm.Barrier()
            t = time.perf_counter()
            loop(20)
            ts.append((time.perf_counter() - t) / 20 / 2 * 1e6)
        result[name].append(statistics.median(ts))
if rank == 0:
    for name, meds in result.items():
        print(f"{name:30s} median over rounds {statistics.median(meds):.3f} us; rounds: "
              + " ".join(f"{m:.3f}" for m in meds))
