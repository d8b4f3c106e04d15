"""A stand-in for ``pynvml`` (nvidia-ml-py): the functions and constants gpucomm.site.nodestate
calls, answering from a described node instead of a driver, so that the reader runs on a
machine without a GPU.

In a test: ``sys.modules["pynvml"] = nvml_standin.make(node)``.  In a subprocess (a ReFrame
job): put a directory holding ``pynvml.py`` (``pynvml_shim``'s text) on PYTHONPATH, with this
directory too, and NVML_STANDIN=<a JSON file of the node>.

A node is {"driver": str, "gpus": [gpu, ...]}, a gpu {"name", "bus_id", "pcie": [gen, max_gen,
width, max_width], "ecc": int, "retired": [sbe, dbe], "pending": bool, "rows": [corr, unc,
pending, failure], "reasons": int, "links": [state, ...] with state "up", "down" or
"unsupported", "speed_MBps": int}.  The values of the reference node (one H200 of an NVLink
board: PCIe gen 5 x16, no ECC error, idle, all 18 NVLink slots Not Supported) are ``H200X1``.
"""

import copy
import json
import os
import types

NVML_FEATURE_DISABLED, NVML_FEATURE_ENABLED = 0, 1
NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_NOT_SUPPORTED = 2, 3
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC = 1, 0
NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0
NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
NVML_FI_DEV_NVLINK_GET_SPEED = 164
NVML_NVLINK_MAX_LINKS = 36
MESSAGES = {2: "Invalid Argument", 3: "Not Supported", 12: "NVML Shared Library Not Found"}


def gpu(index, name="NVIDIA H200", links=None, **over):
    base = {"name": name, "bus_id": f"00000000:{0x19 + 0x20 * index:02X}:00.0", "pcie": [5, 5, 16, 16],
            "ecc": 0, "retired": [0, 0], "pending": False, "rows": [0, 0, 0, 0], "reasons": 0x1,
            "links": ["unsupported"] * 18 if links is None else links, "speed_MBps": 26562}
    base.update(over)
    return base


#: the lent one-GPU machine as NVML showed it (issue 30: gen 5 x16, 0 ECC, reasons 0x1,
#: nvmlDeviceGetNvLinkState Not Supported on all 18 links)
H200X1 = {"driver": "580.95.05", "gpus": [gpu(0)]}
#: the two-GPU machine (NV18): 18 links up per GPU
H200X2 = {"driver": "580.95.05", "gpus": [gpu(0, links=["up"] * 18), gpu(1, links=["up"] * 18)]}


def make(node=None, init_error=None):
    """A pynvml module answering for ``node`` (H200X1 by default); ``init_error``: the NVML
    error code nvmlInit raises (e.g. NVML_ERROR_LIBRARY_NOT_FOUND)."""
    node = copy.deepcopy(node or H200X1)
    mod = types.ModuleType("pynvml")
    mod.__dict__.update({k: v for k, v in globals().items() if k.isupper()})

    class NVMLError(Exception):
        def __init__(self, value):
            super().__init__(value)
            self.value = value

        def __str__(self):
            return MESSAGES.get(self.value, f"NVML Error with code {self.value}")

    mod.NVMLError = NVMLError
    mod.calls = []

    def dev(h):
        return node["gpus"][h]

    def init():
        mod.calls.append("init")
        if init_error is not None:
            raise NVMLError(init_error)

    def link_state(h, link):
        links = dev(h)["links"]
        if link >= len(links):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        if links[link] == "unsupported":
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        return NVML_FEATURE_ENABLED if links[link] == "up" else NVML_FEATURE_DISABLED

    def field_values(h, fields):
        out = []
        for field, link in fields:
            value = types.SimpleNamespace(uiVal=dev(h)["speed_MBps"])
            out.append(types.SimpleNamespace(fieldId=field, scopeId=link, nvmlReturn=0, valueType=1, value=value))
        return out

    def retired(h, cause):
        return list(range(dev(h)["retired"][cause]))

    mod.__dict__.update(
        nvmlInit=init, nvmlShutdown=lambda: mod.calls.append("shutdown"),
        nvmlSystemGetDriverVersion=lambda: node["driver"],
        nvmlDeviceGetCount=lambda: len(node["gpus"]),
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetName=lambda h: dev(h)["name"],
        nvmlDeviceGetUUID=lambda h: f"GPU-standin-{h}",
        nvmlDeviceGetPciInfo=lambda h: types.SimpleNamespace(busId=dev(h)["bus_id"].encode()),
        nvmlDeviceGetCurrPcieLinkGeneration=lambda h: dev(h)["pcie"][0],
        nvmlDeviceGetMaxPcieLinkGeneration=lambda h: dev(h)["pcie"][1],
        nvmlDeviceGetCurrPcieLinkWidth=lambda h: dev(h)["pcie"][2],
        nvmlDeviceGetMaxPcieLinkWidth=lambda h: dev(h)["pcie"][3],
        nvmlDeviceGetTotalEccErrors=lambda h, kind, counter: dev(h)["ecc"],
        nvmlDeviceGetRetiredPages=retired,
        nvmlDeviceGetRetiredPagesPendingStatus=lambda h: int(dev(h)["pending"]),
        nvmlDeviceGetRemappedRows=lambda h: tuple(dev(h)["rows"]),
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: dev(h)["reasons"],
        nvmlDeviceGetNvLinkState=link_state,
        nvmlDeviceGetNvLinkVersion=lambda h, link: 4,
        nvmlDeviceGetFieldValues=field_values,
    )
    return mod


def from_environment():
    """The module a subprocess imports as pynvml: the node of $NVML_STANDIN (a JSON file)."""
    path = os.environ.get("NVML_STANDIN")
    node = json.load(open(path)) if path else None
    return make(node)


#: the text of a ``pynvml.py`` that makes a subprocess import this stand-in as pynvml
PYNVML_SHIM = "import sys, nvml_standin\nsys.modules['pynvml'] = nvml_standin.from_environment()\n"
