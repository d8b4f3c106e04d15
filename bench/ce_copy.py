"""Copy-engine peer copy between GPU 0 and GPU 1 of this node, nvbandwidth-style, from our own
code: the native anchor for the ipc-copy method.  One process, cudaMemcpyPeerAsync, timed with
CUDA events; 'write' issues the copy on the source GPU's stream, 'read' on the destination's.
Data is random (never zeros) and checked after the copies.

    python3 bench/ce_copy.py [--size 1G] [--iters 20]
"""

import argparse
import json

import cupy as cp
import numpy as np

from gpucomm.sizes import parse_size


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    n = parse_size(args.size)
    rt = cp.cuda.runtime
    bufs, streams = [], []
    for d in (0, 1):
        with cp.cuda.Device(d):
            for p in (0, 1):
                if p != d and rt.deviceCanAccessPeer(d, p):
                    try:
                        rt.deviceEnablePeerAccess(p)
                    except cp.cuda.runtime.CUDARuntimeError:
                        pass
            bufs.append(cp.random.randint(1, 255, size=n, dtype=cp.uint8) if d == 0
                        else cp.zeros(n, dtype=cp.uint8))
            streams.append(cp.cuda.Stream(non_blocking=True))
    results = {}
    for mode, dev in (("write", 0), ("read", 1)):
        with cp.cuda.Device(dev):
            s = streams[dev]
            times = []
            for i in range(args.iters + 3):
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record(s)
                rt.memcpyPeerAsync(bufs[1].data.ptr, 1, bufs[0].data.ptr, 0, n, s.ptr)
                e1.record(s)
                e1.synchronize()
                if i >= 3:
                    times.append(cp.cuda.get_elapsed_time(e0, e1) * 1e-3)
            # back to back, one pair of events around all copies
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record(s)
            for _ in range(args.iters):
                rt.memcpyPeerAsync(bufs[1].data.ptr, 1, bufs[0].data.ptr, 0, n, s.ptr)
            e1.record(s)
            e1.synchronize()
            batch = cp.cuda.get_elapsed_time(e0, e1) * 1e-3 / args.iters
        with cp.cuda.Device(1):
            ok = bool(cp.array_equal(bufs[1], cp.asarray(bufs[0].get())))
        t = np.array(times)
        results[mode] = {"size": n, "median_GBps": n / np.median(t) / 1e9, "best_GBps": n / t.min() / 1e9,
                         "p05_time_us": float(np.percentile(t, 5) * 1e6), "p95_time_us": float(np.percentile(t, 95) * 1e6),
                         "back_to_back_GBps": n / batch / 1e9, "validated": ok}
        print(f"CE {mode:5s} {n} B: median {results[mode]['median_GBps']:.1f} GB/s, best "
              f"{results[mode]['best_GBps']:.1f}, back-to-back {results[mode]['back_to_back_GBps']:.1f}, "
              f"data {'ok' if ok else 'WRONG'}")
    print("CE-COPY " + json.dumps(results))


if __name__ == "__main__":
    main()
