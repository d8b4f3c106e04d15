"""``python -m gpucomm.site.nodestate``: the hardware of one node, read before any number is measured.

Run on the compute node (the NodeStateCheck runs it in the job script, without a launcher). It
reads, per GPU, through the vendor's library (NVML through ``nvidia-ml-py``, imported as
``pynvml``; AMD SMI through ``amdsmi``), never from a tool's screen output:

* model, UUID and PCI bus id;
* every GPU-to-GPU link slot (NVLink, or xGMI on AMD): up, down, or not supported, its version
  and speed where the library says them;
* PCIe generation and width, current and the link's maximum;
* volatile uncorrected ECC errors, retired pages (and whether a retirement is pending),
  remapped rows (pending, failed);
* the clocks-event (throttle) reasons: HW slowdown, SW and HW thermal slowdown and HW power
  brake mean trouble; idle, application clocks, SW power cap, sync boost and display clocks do
  not (NVML's nvmlClocksEventReason* flags);

and per visible NIC its state and rate from Linux sysfs, the kernel's documented interface:
``/sys/class/net/<if>/{operstate,speed}`` (speed in Mb/s) and
``/sys/class/infiniband/<dev>/ports/<n>/{state,rate}`` (Documentation/ABI/stable/sysfs-class-net
and sysfs-class-infiniband).  Virtual interfaces (no ``device`` link) and ``lo`` are left out.

With ``--expect FILE`` (a node class's expected values, config/nodeclasses.py, as JSON) it
judges what it read (``judge``): every problem one line naming the GPU and the link, e.g.
``GPU 1 (0000:19:00.0) NVLink 7: down, expected up at 25 GB/s``.  Without it, it only reads:
``--json FILE`` keeps everything read, for committing a node class's real values.

Output: human lines, then one ``contract.NODESTATE_TAG {json}`` record on stdout (``ok``,
``gpus``, ``nics``, ``problems``, ``notes``, ``skip`` or ``error``); exit codes from constants:
EXIT_OK, EXIT_HARDWARE (a problem found), EXIT_CAPABILITY (the vendor's Python package is not
installed: the record's ``skip`` names it), EXIT_BAD_INPUT (bad options, a bad expectation file,
a fault hook that cannot fire).

Fault hook: GPUCOMM_TEST_LINK_DOWN=GPU:LINK makes the reader see that link slot of that GPU (the
library's index) down.  A hook naming a GPU or a link slot the library does not report cannot
fire: an error, never a silent pass.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import socket
import sys
from collections.abc import Callable, Mapping
from fnmatch import fnmatch
from types import ModuleType
from typing import Any

from ..constants import EXIT_BAD_INPUT, EXIT_CAPABILITY, EXIT_HARDWARE, EXIT_OK
from ..contract import ERROR_PREFIX, NODESTATE_TAG

#: the fault hook: GPU:LINK, that link slot of that GPU read as down
LINK_DOWN = "GPUCOMM_TEST_LINK_DOWN"
#: vendor -> (the Python package to install, the module it provides, the links' name, the
#: extra of pyproject.toml that installs it)
VENDORS = {"nvidia": ("nvidia-ml-py", "pynvml", "NVLink", "nodestate"),
           "amd": ("amdsmi", "amdsmi", "xGMI", "nodestate-amd")}
UP, DOWN, UNSUPPORTED = "up", "down", "not supported"

#: NVML's clocks-event reasons (nvmlClocksEventReason*, nvml.h): those that mean trouble ...
TROUBLE_REASONS = {0x8: "HW slowdown", 0x20: "SW thermal slowdown", 0x40: "HW thermal slowdown",
                   0x80: "HW power brake slowdown"}
#: ... and those that do not
BENIGN_REASONS = {0x1: "GPU idle", 0x2: "applications clocks setting", 0x4: "SW power cap",
                  0x10: "sync boost", 0x100: "display clock setting"}
#: amdsmi_get_violation_status: the active flags that mean trouble (thermal: PROCHOT, socket,
#: voltage regulator, HBM); the power cap (active_ppt_pwr) does not
AMD_TROUBLE = {"active_prochot_thrm": "PROCHOT thermal", "active_socket_thrm": "socket thermal",
               "active_vr_thrm": "voltage regulator thermal", "active_hbm_thrm": "HBM thermal"}
#: amdsmi's PCIe speed (MT/s) -> generation
PCIE_GEN_OF_MTS = {2500: 1, 5000: 2, 8000: 3, 16000: 4, 32000: 5, 64000: 6}


class Unavailable(Exception):
    """The vendor's Python package is not installed (the message names it): a skip."""


class BadInput(Exception):
    """A bad expectation file or a fault hook that cannot fire."""


def bus_id(raw: object) -> str:
    """A PCI bus id as sysfs writes it: '00000000:19:00.0' -> '0000:19:00.0'."""
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    domain, _, rest = text.lower().partition(":")
    return f"{domain[-4:]}:{rest}" if rest and len(domain) > 4 else text.lower()


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


# ---------------------------------------------------------------------------- the libraries

def load_library(vendor: str) -> tuple[str, ModuleType]:
    """(vendor, module) of ``vendor`` ('auto': NVIDIA's, else AMD's, whichever imports)."""
    wanted = ["nvidia", "amd"] if vendor == "auto" else [vendor]
    for name in wanted:
        module = _import(name)
        if module is not None:
            return name, module
    packages = " or ".join(f"{VENDORS[n][0]} ({n}: pip install 'gpucomm[{VENDORS[n][3]}]')" for n in wanted)
    raise Unavailable(f"no GPU library: install {packages} in {sys.executable}")


def _import(vendor):
    """The vendor's module, or None where it is not installed."""
    try:
        if vendor == "nvidia":
            import pynvml
            return pynvml
        import amdsmi
        return amdsmi
    except ImportError:
        return None


def package_version(vendor: str) -> str | None:
    from importlib import metadata
    try:
        return metadata.version(VENDORS[vendor][0])
    except metadata.PackageNotFoundError:
        return None


def _try(errors, key, fn, *args):
    """fn(*args), or None with the library's reason in errors[key]."""
    try:
        return fn(*args)
    except Exception as exc:  # the libraries raise their own classes (NVMLError, AmdSmiException)
        errors[key] = str(exc) or type(exc).__name__
        return None


# ---------------------------------------------------------------------------- NVIDIA (NVML)

def _field_value(field):
    """The number in an NVML field value (its union read by its valueType), or None."""
    if getattr(field, "nvmlReturn", 0) != 0:
        return None
    member = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}
    return getattr(field.value, member.get(field.valueType, "ullVal"))


def nvml_links(nvml: Any, handle: Any, errors: dict[str, str]) -> list[dict[str, Any]]:
    """Every NVLink slot the device answers for: [{link, state, version, speed_GBps}].  A slot
    that answers Not Supported is listed as such; one past the device's range (Invalid
    Argument) is not a slot."""
    links = []
    for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
        try:
            state = UP if nvml.nvmlDeviceGetNvLinkState(handle, link) == nvml.NVML_FEATURE_ENABLED else DOWN
        except nvml.NVMLError as exc:
            if getattr(exc, "value", None) == nvml.NVML_ERROR_NOT_SUPPORTED:
                links.append({"link": link, "state": UNSUPPORTED})
                continue
            if getattr(exc, "value", None) != nvml.NVML_ERROR_INVALID_ARGUMENT:
                errors[f"nvlink {link}"] = str(exc)
            continue
        entry = {"link": link, "state": state, "version": None, "speed_GBps": None}
        if state == UP:
            entry["version"] = _try(errors, f"nvlink {link} version", nvml.nvmlDeviceGetNvLinkVersion, handle, link)
            # NVML_FI_DEV_NVLINK_GET_SPEED, scoped to the link: MB/s (nvml.h)
            values = _try(errors, f"nvlink {link} speed", nvml.nvmlDeviceGetFieldValues, handle,
                          [(nvml.NVML_FI_DEV_NVLINK_GET_SPEED, link)])
            speed = _field_value(values[0]) if values else None
            entry["speed_GBps"] = round(speed / 1000, 3) if speed else None
        links.append(entry)
    return links


def each_gpu(library: str, init: Callable[[], object], handles: Callable[[], list[Any]],
             shutdown: Callable[[], object], read_one: Callable[[int, Any, dict[str, str]], dict[str, Any]]
             ) -> dict[str, Any]:
    """{gpus, init_error}: read_one(index, handle, errors) of every GPU between the library's
    init and shutdown, each GPU's failed readings in its ``errors``."""
    try:
        init()
    except Exception as exc:  # NVMLError, AmdSmiException
        return {"gpus": [], "init_error": f"{library} does not initialise: {exc}"}
    try:
        gpus = []
        for index, handle in enumerate(handles()):
            errors: dict[str, str] = {}
            gpus.append(dict(read_one(index, handle, errors), errors=errors))
        return {"gpus": gpus}
    finally:
        _try({}, "shutdown", shutdown)


def read_nvidia(nvml: Any) -> dict[str, Any]:
    """What NVML says of every GPU of the node."""
    found = {}

    def handles():
        found["driver"] = _text(_try({}, "driver", nvml.nvmlSystemGetDriverVersion) or "") or None
        return [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
    state = each_gpu("NVML", nvml.nvmlInit, handles, nvml.nvmlShutdown, lambda i, h, e: nvml_gpu(nvml, i, h, e))
    return dict(state, driver=found.get("driver"))


def nvml_gpu(nvml: Any, index: int, handle: Any, errors: dict[str, str]) -> dict[str, Any]:
    """One GPU as NVML says it."""
    pci = _try(errors, "pci", nvml.nvmlDeviceGetPciInfo, handle)
    gpu = {"index": index, "name": _text(_try(errors, "name", nvml.nvmlDeviceGetName, handle)),
           "uuid": _text(_try(errors, "uuid", nvml.nvmlDeviceGetUUID, handle)),
           "pci_bus_id": bus_id(pci.busId) if pci is not None else None}
    gpu["pcie"] = {
        "gen": _try(errors, "pcie gen", nvml.nvmlDeviceGetCurrPcieLinkGeneration, handle),
        "max_gen": _try(errors, "pcie max gen", nvml.nvmlDeviceGetMaxPcieLinkGeneration, handle),
        "width": _try(errors, "pcie width", nvml.nvmlDeviceGetCurrPcieLinkWidth, handle),
        "max_width": _try(errors, "pcie max width", nvml.nvmlDeviceGetMaxPcieLinkWidth, handle)}
    gpu["ecc_volatile_uncorrected"] = _try(
        errors, "ecc", nvml.nvmlDeviceGetTotalEccErrors, handle,
        nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC)
    pages: dict[str, Any] = {}
    sbe = _try(errors, "retired pages", nvml.nvmlDeviceGetRetiredPages, handle,
               nvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)
    dbe = _try(errors, "retired pages", nvml.nvmlDeviceGetRetiredPages, handle,
               nvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
    if sbe is not None and dbe is not None:
        pages.update(retired_sbe=len(sbe), retired_dbe=len(dbe))
    pending = _try(errors, "retirement pending", nvml.nvmlDeviceGetRetiredPagesPendingStatus, handle)
    if pending is not None:
        pages["retirement_pending"] = bool(pending)
    rows = _try(errors, "remapped rows", nvml.nvmlDeviceGetRemappedRows, handle)
    if rows is not None:
        pages.update(remapped_correctable=rows[0], remapped_uncorrectable=rows[1],
                     remap_pending=bool(rows[2]), remap_failure=bool(rows[3]))
    gpu["pages"] = pages
    reasons_fn = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    reasons = _try(errors, "clocks event reasons", reasons_fn, handle)
    gpu["clocks_event_reasons"] = reasons
    gpu["throttle"] = [n for bit, n in TROUBLE_REASONS.items() if reasons and reasons & bit]
    gpu["idle"] = bool(reasons and reasons & 0x1)
    gpu["links"] = nvml_links(nvml, handle, errors)
    return gpu


# ---------------------------------------------------------------------------- AMD (amdsmi)

def read_amd(smi: Any) -> dict[str, Any]:
    """What AMD SMI says of every GPU (GCD) of the node."""
    state = each_gpu("AMD SMI", smi.amdsmi_init, smi.amdsmi_get_processor_handles, smi.amdsmi_shut_down,
                     lambda i, h, e: amd_gpu(smi, i, h, e))
    return dict(state, driver=None)


def amd_gpu(smi: Any, index: int, handle: Any, errors: dict[str, str]) -> dict[str, Any]:
    """One GPU (GCD) as AMD SMI says it."""
    asic = _try(errors, "asic", smi.amdsmi_get_gpu_asic_info, handle) or {}
    gpu = {"index": index, "name": asic.get("market_name"),
           "uuid": _try(errors, "uuid", smi.amdsmi_get_gpu_device_uuid, handle),
           "pci_bus_id": _try(errors, "bdf", smi.amdsmi_get_gpu_device_bdf, handle)}
    pcie = _try(errors, "pcie", smi.amdsmi_get_pcie_info, handle) or {}
    static, metric = pcie.get("pcie_static", {}), pcie.get("pcie_metric", {})
    gpu["pcie"] = {"gen": PCIE_GEN_OF_MTS.get(metric.get("pcie_speed")),
                   "max_gen": static.get("pcie_interface_version"),
                   "width": metric.get("pcie_width"), "max_width": static.get("max_pcie_width")}
    ecc = _try(errors, "ecc", smi.amdsmi_get_gpu_total_ecc_count, handle) or {}
    gpu["ecc_volatile_uncorrected"] = ecc.get("uncorrectable_count")
    bad = _try(errors, "bad pages", smi.amdsmi_get_gpu_bad_page_info, handle)
    gpu["pages"] = {} if bad is None else {
        "retired": len(bad),
        "retirement_pending": any("PENDING" in str(p.get("status", "")).upper() for p in bad)}
    violation = _try(errors, "violation status", smi.amdsmi_get_violation_status, handle) or {}
    gpu["clocks_event_reasons"] = None
    gpu["throttle"] = [n for key, n in AMD_TROUBLE.items() if violation.get(key) is True]
    gpu["idle"] = False
    status = _try(errors, "xgmi", smi.amdsmi_get_gpu_xgmi_link_status, handle) or {}
    states = {"U": UP, "D": DOWN, "X": DOWN}
    gpu["links"] = [{"link": i, "state": states.get(s, UNSUPPORTED), "version": None, "speed_GBps": None}
                    for i, s in enumerate(status.get("status", []))]
    return gpu


# ---------------------------------------------------------------------------- NICs (sysfs)

def _sysfs(path):
    try:
        with open(path) as fp:
            return fp.read().strip()
    except OSError:  # speed of a link that is down: EINVAL
        return None


def read_nics(root: str = "/sys") -> list[dict[str, Any]]:
    """[{name, kind, state, rate_Gbps}] of the physical network interfaces and InfiniBand ports."""
    nics = []
    for path in sorted(glob.glob(os.path.join(root, "class", "net", "*"))):
        name = os.path.basename(path)
        if name == "lo" or not os.path.exists(os.path.join(path, "device")):
            continue
        speed = _sysfs(os.path.join(path, "speed"))
        mbps = int(speed) if speed and speed.lstrip("-").isdigit() and int(speed) > 0 else None
        nics.append({"name": name, "kind": "net", "state": _sysfs(os.path.join(path, "operstate")),
                     "rate_Gbps": mbps / 1000 if mbps else None})
    for path in sorted(glob.glob(os.path.join(root, "class", "infiniband", "*", "ports", "*"))):
        device, port = path.split(os.sep)[-3], os.path.basename(path)
        state = _sysfs(os.path.join(path, "state")) or ""        # '4: ACTIVE'
        rate = (_sysfs(os.path.join(path, "rate")) or "").split()  # '200 Gb/sec (4X HDR)'
        try:
            gbps = float(rate[0])
        except (IndexError, ValueError):
            gbps = None
        nics.append({"name": f"{device}/{port}", "kind": "ib", "state": state.split(":")[-1].strip().lower() or None,
                     "rate_Gbps": gbps})
    return nics


# ---------------------------------------------------------------------------- the fault hook

def link_down_request(environ: Mapping[str, str] = os.environ) -> tuple[int, int] | None:
    """(gpu, link) of GPUCOMM_TEST_LINK_DOWN, or None."""
    spec = environ.get(LINK_DOWN, "")
    if not spec:
        return None
    try:
        gpu, link = (int(x) for x in spec.split(":"))
        if gpu < 0 or link < 0:
            raise ValueError
    except ValueError:
        raise BadInput(f"bad {LINK_DOWN}={spec!r}: expected GPU:LINK (indices, e.g. 1:7)") from None
    return gpu, link


def force_link_down(state: dict[str, Any], request: tuple[int, int], link_name: str) -> None:
    """The hook: that link slot of that GPU read as down; BadInput where there is none."""
    gpu_index, link = request
    spec = f"{LINK_DOWN}={gpu_index}:{link}"
    gpus = {g["index"]: g for g in state["gpus"]}
    if gpu_index not in gpus:
        raise BadInput(f"{spec} cannot fire: there is no GPU {gpu_index} "
                       f"(GPUs: {', '.join(map(str, gpus)) or 'none'})")
    slots = {entry["link"]: entry for entry in gpus[gpu_index]["links"]}
    if link not in slots:
        have = f"{link_name} slots {min(slots)}-{max(slots)}" if slots else f"no {link_name} slot"
        raise BadInput(f"{spec} cannot fire: GPU {gpu_index} has no {link_name} {link} ({have})")
    slots[link].update(state=DOWN, forced=True, speed_GBps=None)


# ---------------------------------------------------------------------------- judging

def _gpu_label(gpu):
    return f"GPU {gpu['index']} ({gpu.get('pci_bus_id') or 'unknown bus id'})"


def _ranges(numbers):
    """[0, 1, 2, 5] -> '0-2, 5'."""
    out: list[list[int]] = []
    numbers = sorted(numbers)
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out)


def against_class(state: dict[str, Any], expected: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(problems, notes) of what was read against a node class's expected values
    (config/nodeclasses.py): each problem one line naming the GPU and the link."""
    problems: list[str] = []
    notes: list[str] = []
    link_name = VENDORS[state["vendor"]][2]
    gpus = state["gpus"]
    want = expected.get("gpus")
    model = expected.get("gpu_model")
    if want is not None and len(gpus) != want:
        found = ", ".join(f"{_gpu_label(g)} {g['name']}" for g in gpus) or "none"
        problems.append(f"{len(gpus)} GPUs, expected {want} x {model or 'GPU'} (found: {found})")
    for gpu in gpus:
        label = _gpu_label(gpu)
        if model and model.lower() not in (gpu.get("name") or "").lower():
            problems.append(f"{label}: {gpu.get('name')}, expected {model}")
        problems += _judge_links(gpu, label, link_name, expected, notes)
        problems += _judge_pcie(gpu, label, expected, notes)
        ecc = gpu.get("ecc_volatile_uncorrected")
        if ecc:
            problems.append(f"{label}: {ecc} volatile uncorrected ECC errors")
        pages = gpu.get("pages") or {}
        if pages.get("retirement_pending"):
            problems.append(f"{label}: a page retirement is pending (reset the GPU, then check again)")
        if pages.get("remap_pending"):
            problems.append(f"{label}: a row remapping is pending (reset the GPU, then check again)")
        if pages.get("remap_failure"):
            problems.append(f"{label}: row remapping failed")
        if gpu.get("throttle"):
            problems.append(f"{label}: clocks held down by {', '.join(gpu['throttle'])}")
        for key, reason in sorted((gpu.get("errors") or {}).items()):
            notes.append(f"{label}: {key}: {reason}")
    problems += _judge_nics(state.get("nics") or [], expected.get("nics"), notes)
    return problems, notes


def _judge_links(gpu, label, link_name, expected, notes):
    problems = []
    want, speed = expected.get("links_up"), expected.get("link_GBps")
    at = f" at {speed:g} GB/s" if speed else ""
    links = gpu.get("links") or []
    up = [entry for entry in links if entry["state"] == UP]
    down = [entry for entry in links if entry["state"] == DOWN]
    unsupported = [entry["link"] for entry in links if entry["state"] == UNSUPPORTED]
    for entry in down:
        forced = f" ({LINK_DOWN})" if entry.get("forced") else ""
        problems.append(f"{label} {link_name} {entry['link']}: down{forced}, expected up{at}")
    for entry in up:
        if speed and entry.get("speed_GBps") is not None and entry["speed_GBps"] < speed:
            problems.append(f"{label} {link_name} {entry['link']}: up at {entry['speed_GBps']:g} GB/s, "
                            f"expected {speed:g} GB/s")
    if want is not None and len(up) + len(down) < want:
        why = f" ({link_name} {_ranges(unsupported)}: not supported)" if unsupported else ""
        problems.append(f"{label}: {len(up)} {link_name} links up, expected {want}{at}{why}")
    elif want is not None and len(up) > want:
        notes.append(f"{label}: {len(up)} {link_name} links up, the node class expects {want}")
    if speed and any(entry.get("speed_GBps") is None for entry in up):
        notes.append(f"{label}: the library gives no {link_name} speed; speeds not judged")
    return problems


def _judge_pcie(gpu, label, expected, notes):
    """Width is judged as it is now; the generation by the link's maximum, and now unless the
    GPU is idle (a GPU lowers its PCIe generation at idle to save power)."""
    problems = []
    pcie = gpu.get("pcie") or {}
    gen, width = expected.get("pcie_gen"), expected.get("pcie_width")
    if width and pcie.get("width") is not None and pcie["width"] < width:
        problems.append(f"{label}: PCIe x{pcie['width']}, expected x{width}")
    if gen and pcie.get("max_gen") is not None and pcie["max_gen"] < gen:
        problems.append(f"{label}: PCIe gen {pcie['max_gen']} at most, expected gen {gen}")
    elif gen and pcie.get("gen") is not None and pcie["gen"] < gen:
        if gpu.get("idle"):
            notes.append(f"{label}: PCIe gen {pcie['gen']} now, idle (gen {gen} expected under load)")
        else:
            problems.append(f"{label}: PCIe gen {pcie['gen']}, expected gen {gen}")
    return problems


def _judge_nics(nics, want, notes):
    """The NICs a class names (a glob of names, how many, the rate each): present, up, at rate."""
    if not want:
        return []
    problems = []
    mine = [n for n in nics if n["kind"] == want.get("kind", "net") and fnmatch(n["name"], want["names"])]
    count, rate = want.get("count"), want.get("rate_Gbps")
    if count is not None and len(mine) != count:
        problems.append(f"{len(mine)} NICs {want['names']}, expected {count}"
                        f" ({', '.join(n['name'] for n in mine) or 'none'})")
    for nic in mine:
        if nic["state"] not in ("up", "active"):
            problems.append(f"NIC {nic['name']}: {nic['state']}, expected up" + (f" at {rate:g} Gb/s" if rate else ""))
        elif rate and nic["rate_Gbps"] is not None and nic["rate_Gbps"] < rate:
            problems.append(f"NIC {nic['name']}: up at {nic['rate_Gbps']:g} Gb/s, expected {rate:g} Gb/s")
        elif rate and nic["rate_Gbps"] is None:
            notes.append(f"NIC {nic['name']}: no rate in sysfs; not judged")
    return problems


# ---------------------------------------------------------------------------- the command

def read_state(vendor: str = "auto", sysfs: str = "/sys", environ: Mapping[str, str] = os.environ
               ) -> dict[str, Any]:
    """Everything read: {vendor, library, driver, gpus, nics, fault}.  Raises Unavailable where
    the vendor's package is missing, BadInput where the fault hook cannot fire."""
    request = link_down_request(environ)
    vendor, module = load_library(vendor)
    package = VENDORS[vendor][0]
    reading = read_nvidia(module) if vendor == "nvidia" else read_amd(module)
    state = {"vendor": vendor, "library": {"package": package, "version": package_version(vendor)},
             "node": socket.gethostname(), "nics": read_nics(sysfs), "fault": None, **reading}
    if request is not None:
        force_link_down(state, request, VENDORS[vendor][2])
        state["fault"] = f"{LINK_DOWN}={request[0]}:{request[1]}"
    return state


def human_lines(record: dict[str, Any]) -> list[str]:
    """One line per GPU and NIC, then the problems and notes."""
    lines = []
    for gpu in record.get("gpus", []):
        pcie = gpu.get("pcie") or {}
        links = gpu.get("links") or []
        up = sum(entry["state"] == UP for entry in links)
        lines.append(f"{_gpu_label(gpu)} {gpu.get('name')}: PCIe gen {pcie.get('gen')}/{pcie.get('max_gen')} "
                     f"x{pcie.get('width')}/{pcie.get('max_width')}, links up {up}/{len(links)}, "
                     f"ECC uncorrected {gpu.get('ecc_volatile_uncorrected')}, "
                     f"clocks-event reasons {gpu.get('clocks_event_reasons')}")
    for nic in record.get("nics", []):
        lines.append(f"NIC {nic['name']} ({nic['kind']}): {nic['state']}, {nic['rate_Gbps']} Gb/s")
    lines += [f"problem: {p}" for p in record.get("problems", [])]
    lines += [f"note: {n}" for n in record.get("notes", [])]
    return lines


def run(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> tuple[dict[str, Any], int]:
    """(record, exit code)."""
    expected = {}
    if args.expect:
        try:
            with open(args.expect) as fp:
                expected = json.load(fp)
            if not isinstance(expected, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            return {"ok": False, "error": f"--expect {args.expect}: {exc}"}, EXIT_BAD_INPUT
        if expected.get("vendor", "auto") not in ("auto",) + tuple(VENDORS):
            return {"ok": False, "error": f"--expect {args.expect}: vendor {expected['vendor']!r}: "
                                          f"choose {', '.join(VENDORS)}"}, EXIT_BAD_INPUT
    vendor = args.vendor if args.vendor != "auto" else expected.get("vendor", "auto")
    record: dict[str, Any] = {"node_class": expected.get("name"), "expected": expected or None}
    try:
        record.update(read_state(vendor, args.sysfs, environ))
    except Unavailable as exc:
        return dict(record, ok=False, skip=str(exc)), EXIT_CAPABILITY
    except BadInput as exc:
        return dict(record, ok=False, error=str(exc)), EXIT_BAD_INPUT
    problems, notes = against_class(record, expected) if expected else ([], [])
    if record.get("init_error"):
        problems.insert(0, record["init_error"])
    record.update(problems=problems, notes=notes, ok=not problems, judged=bool(expected))
    return record, (EXIT_HARDWARE if problems else EXIT_OK)


def _unwritable(path):
    """Why ``path`` cannot be written (it is opened for appending and left as it was), or None."""
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        return exc.strerror
    if not existed:
        os.unlink(path)
    return None


def main(argv: list[str] | None = None, environ: Mapping[str, str] = os.environ) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpucomm.site.nodestate", description=__doc__.split("\n")[0])
    parser.add_argument("--expect", default="", help="the node class's expected values (JSON; config/nodeclasses.py)")
    parser.add_argument("--vendor", default="auto", choices=["auto"] + list(VENDORS),
                        help="whose library to read (default: the class's vendor, else whichever imports)")
    parser.add_argument("--json", default="", help="also write the record to this file")
    parser.add_argument("--sysfs", default="/sys", help=argparse.SUPPRESS)  # the tests' stand-in tree
    args = parser.parse_args(argv)
    unwritable = args.json and _unwritable(args.json)
    if unwritable:
        print(f"{ERROR_PREFIX} nodestate: --json {args.json}: cannot write it ({unwritable})", file=sys.stderr)
        return EXIT_BAD_INPUT
    record, code = run(args, environ)
    for line in human_lines(record):
        print(line)
    print(f"{NODESTATE_TAG} {json.dumps(record, sort_keys=True)}", flush=True)
    if args.json:
        try:
            with open(args.json, "w") as fp:
                json.dump(record, fp, indent=1, sort_keys=True)
        except OSError as exc:
            print(f"{ERROR_PREFIX} nodestate: --json {args.json}: cannot write it ({exc.strerror})", file=sys.stderr)
            return EXIT_BAD_INPUT
    reason = record.get("skip") or record.get("error")
    if reason or record.get("problems"):
        print(f"{ERROR_PREFIX} nodestate: {reason or '; '.join(record['problems'])}", file=sys.stderr, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
