"""Host memory on a chosen NUMA node, for the GPU data-path operation (ops/datapaths.py).

The node of a GPU is its PCI device's (``/sys/bus/pci/devices/<bus id>/numa_node``); the
farthest is the node with CPUs (``/sys/devices/system/node/has_cpu``: memory-only nodes, such as
a GH200's HBM, are no host memory) at the greatest distance in the GPU's node's row of
``/sys/devices/system/node/node<N>/distance`` (the firmware's SLIT).

Placement: an anonymous mapping, ``mbind(MPOL_BIND, MPOL_MF_STRICT | MPOL_MF_MOVE)`` to the node
through the system call (libc's ``syscall``; no libnuma needed), then every page touched; the
node of the first, middle and last page is read back with ``get_mempolicy(MPOL_F_NODE |
MPOL_F_ADDR)``.  Where mbind is refused (a seccomp filter, a kernel without NUMA), the fallback is
first touch by this thread bound with ``os.sched_setaffinity`` to the node's CPUs (the kernel's
local allocation), its affinity restored after; ``HostBuffer.binding`` says which was used and
``HostBuffer.verified`` what the pages read back.
"""

import ctypes
import mmap
import os
import platform

import numpy as np

NODE_DIR = "/sys/devices/system/node"
PCI_DIR = "/sys/bus/pci/devices"
MPOL_BIND = 2
MPOL_F_NODE, MPOL_F_ADDR = 1, 2
MPOL_MF_STRICT, MPOL_MF_MOVE = 1, 2
#: (mbind, get_mempolicy) system call numbers by machine (the kernel's syscall tables)
SYSCALLS = {"x86_64": (237, 239), "aarch64": (235, 236), "ppc64le": (259, 260)}
BINDING_MBIND = "mbind(MPOL_BIND)"
BINDING_FIRST_TOUCH = "first touch, thread bound by sched_setaffinity"
BINDING_NONE = "none (no NUMA information)"


def _read(path):
    try:
        with open(path) as fp:
            return fp.read().strip()
    except OSError:
        return None


def parse_list(text):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11] (the kernel's cpulist/nodelist format)."""
    out = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def cpu_nodes(root=NODE_DIR):
    """The NUMA nodes that have CPUs (host memory a thread can be near), [] where unknown."""
    return parse_list(_read(os.path.join(root, "has_cpu")))


def node_cpus(node, root=NODE_DIR):
    return parse_list(_read(os.path.join(root, f"node{node}", "cpulist")))


def distances(node, root=NODE_DIR):
    """{node: distance} from ``node`` (the SLIT row), {} where unknown."""
    row = (_read(os.path.join(root, f"node{node}", "distance")) or "").split()
    nodes = parse_list(_read(os.path.join(root, "possible")) or _read(os.path.join(root, "online")))
    return {n: int(d) for n, d in zip(nodes, row)}


def gpu_node(pci_bus_id, pci_root=PCI_DIR, root=NODE_DIR):
    """The GPU's NUMA node (its PCI device's), or the first node with CPUs where the firmware
    gives none (-1), or None on a machine without NUMA information."""
    value = _read(os.path.join(pci_root, pci_bus_id.lower(), "numa_node"))
    if value is not None and value.lstrip("-").isdigit() and int(value) >= 0:
        return int(value)
    nodes = cpu_nodes(root)
    return nodes[0] if nodes else None


def farthest(node, root=NODE_DIR):
    """The node with CPUs farthest from ``node`` (the lowest-numbered of equals; ``node`` itself
    on a one-node machine)."""
    row = distances(node, root)
    candidates = [n for n in cpu_nodes(root) if n in row] or [node]
    return max(candidates, key=lambda n: (row.get(n, 0), -n))


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _mbind(addr, size, node):
    """mbind the range to ``node`` (MPOL_BIND, strict, move): 0, or the errno."""
    calls = SYSCALLS.get(platform.machine())
    if calls is None or node >= 64:
        return -1
    mask = ctypes.c_ulong(1 << node)
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    rc = libc.syscall(ctypes.c_long(calls[0]), ctypes.c_void_p(addr), ctypes.c_ulong(size),
                      ctypes.c_int(MPOL_BIND), ctypes.byref(mask), ctypes.c_ulong(64),
                      ctypes.c_uint(MPOL_MF_STRICT | MPOL_MF_MOVE))
    return 0 if rc == 0 else ctypes.get_errno() or -1


def page_node(addr):
    """The NUMA node of the page at ``addr`` (get_mempolicy), or None."""
    calls = SYSCALLS.get(platform.machine())
    if calls is None:
        return None
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    value = ctypes.c_int(-1)
    rc = libc.syscall(ctypes.c_long(calls[1]), ctypes.byref(value), ctypes.c_void_p(0), ctypes.c_ulong(0),
                      ctypes.c_void_p(addr), ctypes.c_ulong(MPOL_F_NODE | MPOL_F_ADDR))
    return int(value.value) if rc == 0 else None


class HostBuffer:
    """``size`` bytes of page-aligned host memory placed on NUMA ``node`` (None: where the
    kernel puts it), touched; ``array`` (uint8), ``ptr``, ``binding``, ``verified``."""

    def __init__(self, size, node):
        self.size = size
        self.map = mmap.mmap(-1, max(size, mmap.PAGESIZE))
        self.array = np.frombuffer(self.map, dtype=np.uint8, count=size)
        self.ptr = self.array.ctypes.data
        self.binding = BINDING_NONE
        if node is not None:
            if _mbind(self.ptr, len(self.map), node) == 0:
                self.binding = BINDING_MBIND
                self.array[:] = 0
            else:
                self._first_touch(node)
        else:
            self.array[:] = 0
        step = max(1, size // 2)
        self.verified = sorted({page_node(self.ptr + off) for off in range(0, size, step)} - {None})

    def _first_touch(self, node):
        cpus, before = node_cpus(node), os.sched_getaffinity(0)
        try:
            if cpus:
                os.sched_setaffinity(0, cpus)
                self.binding = BINDING_FIRST_TOUCH
            self.array[:] = 0
        finally:
            os.sched_setaffinity(0, before)

    def close(self):
        self.array = None
        try:
            self.map.close()
        except BufferError:  # a view is still alive: the mapping goes with it
            pass
