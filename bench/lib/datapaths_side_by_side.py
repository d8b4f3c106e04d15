"""The payload's GPU data paths beside nvbandwidth's, one GPU at a time, at one size:

    python3 bench/lib/datapaths_side_by_side.py NVBANDWIDTH_JSON PAYLOAD_JSON [--size BYTES] [--min 0.97]

NVBANDWIDTH_JSON: ``nvbandwidth -j`` output (its testcases' bandwidth matrices, GB/s, one column
per GPU); PAYLOAD_JSON: ``python -m gpucomm gpu-datapaths --json`` (scope single, near NUMA).
Pairs: h2d-ce / host_to_device_memcpy_ce, d2h-ce / device_to_host_memcpy_ce, h2d-sm and d2h-sm
likewise (_sm), local-ce / device_local_copy (goodput S/t both); bidir-ce: each direction
timed by its own events (the record's h2d_GBps, d2h_GBps) against host_to_device_ and
device_to_host_bidirectional_memcpy_ce (each one direction while the other runs); bidir-sm (one
kernel, both directions): S/t against the slower of nvbandwidth's two _sm estimates (its split
warp's half of the measured bandwidth).  Prints one line per path and GPU, the ratio payload /
native; exits 1 if any ratio is below --min or a path has no figure on either side.
"""

import argparse
import json
import sys

NATIVE = {"h2d-ce": ["host_to_device_memcpy_ce"], "d2h-ce": ["device_to_host_memcpy_ce"],
          "h2d-sm": ["host_to_device_memcpy_sm"], "d2h-sm": ["device_to_host_memcpy_sm"],
          "local-ce": ["device_local_copy"],
          "bidir-ce h2d": ["host_to_device_bidirectional_memcpy_ce"],
          "bidir-ce d2h": ["device_to_host_bidirectional_memcpy_ce"],
          "bidir-sm": ["host_to_device_bidirectional_memcpy_sm", "device_to_host_bidirectional_memcpy_sm"]}


def native_figures(path):
    """{testcase: [GB/s per GPU]} of an nvbandwidth -j file (the output may carry lines before
    the JSON document: from its first '{')."""
    with open(path) as fp:
        text = fp.read()
    if "{" not in text:
        raise SystemExit(f"{path}: no nvbandwidth JSON document")
    doc = json.loads(text[text.index("{"):])
    out = {}
    for case in doc.get("nvbandwidth", {}).get("testcases", []):
        matrix = case.get("bandwidth_matrix") or []
        values = []
        for row in matrix:
            for cell in row:
                try:
                    values.append(float(cell))
                except (TypeError, ValueError):
                    continue
        if values:
            out[case["name"]] = values
    return out


def payload_figures(path, size):
    """{(path, gpu): GB/s} of the payload's single-GPU, near-NUMA records at ``size``."""
    with open(path) as fp:
        doc = json.load(fp)
    out = {}
    for rec in doc["results"]:
        if rec["size"] != size or rec.get("scope") != "single" or rec.get("numa") not in ("near", "device"):
            continue
        if rec["path"] == "bidir-ce":
            for d in ("h2d", "d2h"):
                out[f"bidir-ce {d}", rec["gpu"]] = rec[f"{d}_GBps"]
            continue
        key = "direction_GBps" if rec["path"].startswith("bidir") else "goodput_GBps"
        out[rec["path"], rec["gpu"]] = rec[key]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("native")
    p.add_argument("payload")
    p.add_argument("--size", type=int, default=512 << 20, help="the payload's size (nvbandwidth's -b, bytes)")
    p.add_argument("--min", type=float, default=0.97)
    args = p.parse_args(argv)
    native, ours = native_figures(args.native), payload_figures(args.payload, args.size)
    bad = 0
    print(f"{'path':12} {'gpu':>3} {'payload GB/s':>13} {'nvbandwidth GB/s':>17} {'ratio':>6}")
    for (path, gpu), mine in sorted(ours.items()):
        names = NATIVE.get(path, [])
        columns = [native[n][gpu] for n in names if n in native and gpu < len(native[n])]
        if len(columns) != len(names) or not columns:
            print(f"{path:12} {gpu:>3} {mine:13.2f} {'(none)':>17} {'-':>6}  no nvbandwidth figure")
            bad += 1
            continue
        theirs = min(columns)
        ratio = mine / theirs
        flag = "" if ratio >= args.min else f"  below {args.min}"
        bad += bool(flag)
        print(f"{path:12} {gpu:>3} {mine:13.2f} {theirs:17.2f} {ratio:6.3f}{flag}")
    if not ours:
        print(f"no payload records at {args.size} B")
        bad += 1
    print("side by side: " + ("every path >= %.2f" % args.min if not bad else f"{bad} path(s) short"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
