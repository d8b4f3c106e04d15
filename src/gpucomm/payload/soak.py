"""The soak (``--validate-every N``): the received data checked between timed samples, so that
intermittent corruption, which one check per size after the last sample misses, is counted.

At every size (or those of --validate-sizes), after every timed sample that holds a multiple of
N among its iterations (counted from 1), the operation's ``validate`` reads what the sample's
last iteration received (that iteration is the one named; with N a multiple of the batch it is
exactly every Nth iteration), then the next sample re-arms the buffers with ``prepare`` (send
pattern, poisoned receive buffer), so that each check sees only the data of its own sample. All
of it happens between the timer's stop and the next sample's barrier: the timed region is the
one without the soak.

The record of each size gets ``validate_every``, ``checked`` (iterations checked) and
``wrong`` (iterations whose data was wrong on any rank: nccl-tests' ``#wrong`` column counts
wrong elements, this counts wrong iterations); a wrong one fails the run after its record is
written, naming the rank, the size and the iteration (ValidationError, exit 4).

GPUCOMM_TEST_CORRUPT_EVERY=K (payload.faults) makes GPUCOMM_TEST_CORRUPT's damage intermittent:
after every sample holding a multiple of K, before that sample's check.
"""

import time

from ..contract import CHECKED, VALIDATE_EVERY, WRONG
from ..errors import ValidationError, collective


def holds_multiple(sample, batch, every):
    """Whether the iterations of timed sample ``sample`` (0-based, ``batch`` iterations each,
    iterations counted from 1) include a multiple of ``every``."""
    return (sample + 1) * batch // every > sample * batch // every


class Soak:
    """One method's soak state: what every size's timed samples call between samples."""

    def __init__(self, every, sizes, op, rank, corrupt=None, corrupt_every=None):
        self.every_size, self.sizes, self.op, self.rank = every, sizes, op, rank
        self.corrupt, self.corrupt_every = corrupt, corrupt_every  # (rank, size), K: test hook

    def start(self, size):
        self.size, self.checked, self.wrong, self.rearm = size, 0, [], False
        self.every = self.every_size if self.sizes is None or size in self.sizes else None
        self.damage = self.corrupt_every is not None and self.corrupt == (self.rank, size)

    def before_sample(self):
        """Re-arm the buffers after a check; the seconds it took (outside the timed region)."""
        if not self.rearm:
            return 0.0
        t0 = time.perf_counter()
        self.op.prepare(self.size)
        self.rearm = False
        return time.perf_counter() - t0

    def after_sample(self, sample, batch):
        """The test hook's damage, then the check where the sample is due; the seconds it took."""
        t0 = time.perf_counter()
        if self.damage and holds_multiple(sample, batch, self.corrupt_every):
            self.op.corrupt(self.size)
        if self.every and holds_multiple(sample, batch, self.every):
            self.checked += 1
            message = self.op.validate(self.size)
            if message:
                self.wrong.append(((sample + 1) * batch, message))
            self.rearm = True
        return time.perf_counter() - t0

    def finish(self, comm, iterations):
        """Collective, after a size's timed samples: (the record's soak fields, the error to
        raise once the record is written, or None).  The error names the earliest wrong
        iteration (the lowest rank where several ranks had it)."""
        self.rearm = False
        if not self.every:
            return {}, None
        everyone = comm.allgather(self.wrong)
        wrong_iters = {it for ranks in everyone for it, _ in ranks}
        fields = {VALIDATE_EVERY: self.every, CHECKED: self.checked, WRONG: len(wrong_iters)}
        if not wrong_iters:
            return fields, None
        it, _, message = min((ranks[0][0], r, ranks[0][1]) for r, ranks in enumerate(everyone) if ranks)
        return fields, collective(ValidationError(
            f"{message} in timed iteration {it} of {iterations}: {len(wrong_iters)} of "
            f"{self.checked} checked iterations wrong (--validate-every {self.every})"))
