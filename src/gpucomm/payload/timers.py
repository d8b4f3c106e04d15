"""Per-iteration timers.

* ``host``: time.perf_counter around the iteration, after the method has completed all its
  work (stream synchronised); what every method can use.
* ``device``: CUDA/HIP events recorded on the rank's stream around the iteration, for methods
  whose whole iteration is device work queued on that stream (ccl; ipc-copy signalled through
  stream flags): the host's launch latency stays out, the device-side wait
  for the peer stays in.
"""

import time

from ..constants import CCL, IPC_COPY
from ..errors import GpucommError, collective


class HostTimer:
    name = "host"

    def __init__(self, backend, method):
        self.method = method
        self.clock = time.perf_counter

    def start(self):
        self.t0 = self.clock()

    def stop(self):
        self.method.sync()
        return self.clock() - self.t0


class DeviceTimer:
    name = "device-event"

    def __init__(self, backend, method):
        cuda = backend.xp.cuda
        self.method, self.stream = method, backend.stream
        self.ev0, self.ev1 = cuda.Event(), cuda.Event()
        self.elapsed_ms = cuda.get_elapsed_time

    def start(self):
        self.ev0.record(self.stream)

    def stop(self):
        self.ev1.record(self.stream)
        self.method.sync()
        self.ev1.synchronize()
        return self.elapsed_ms(self.ev0, self.ev1) * 1e-3


def device_timed(backend, method):
    """Whether device events can time the method here (Method.device_timer on a device)."""
    return backend.is_device and method.device_timer


def make_timer(name, backend, method):
    """The timer --timer ``name`` (auto, host, device) asks for; device where the method cannot
    have it is a collective error."""
    if name == "auto":
        name = "device" if device_timed(backend, method) else "host"
    if name == "host":
        return HostTimer(backend, method)
    if not device_timed(backend, method):
        raise collective(GpucommError(
            f"--timer device needs a method whose iteration is all device work on one stream "
            f"({CCL}, {IPC_COPY} with stream flags); {method.name} synchronises "
            "through the host"))
    return DeviceTimer(backend, method)
