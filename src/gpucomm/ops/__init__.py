"""Operations: what one timed iteration does, how its buffers are filled and checked."""

from ..errors import GpucommError
from .pingpong import PingPong

REGISTRY = {op.name: op for op in (PingPong,)}


def get_operation(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise GpucommError(f"unknown operation {name!r}: choose one of {', '.join(REGISTRY)}") from None
