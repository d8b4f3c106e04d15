"""Operations: what one timed iteration does, how its buffers are filled and checked."""

from ...errors import GpucommError
from .aggressor import Aggressor
from .allreduce import AllReduce
from .alltoall import AllToAll
from .bandwidth import Bandwidth
from .datapaths import DataPaths
from .multipingpong import MultiPingPong
from .pairmatrix import PairMatrix
from .pingpong import PingPong

REGISTRY = {op.name: op for op in (PingPong, Bandwidth, MultiPingPong, PairMatrix, AllReduce, AllToAll,
                                   Aggressor, DataPaths)}


def get_operation(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise GpucommError(f"unknown operation {name!r}: choose one of {', '.join(REGISTRY)}") from None
