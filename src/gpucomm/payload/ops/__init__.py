"""Operations: what one timed iteration does, how its buffers are filled and checked; each one
declared once in constants.OPERATION_DECLS (whose ``payload`` names its class)."""

from ...constants import OPERATION_DECLS
from ...errors import GpucommError
from ..methods import load

#: name -> class, one per declaration of constants.OPERATION_DECLS
REGISTRY = {d.name: load(d.payload, __name__) for d in OPERATION_DECLS}


def get_operation(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise GpucommError(f"unknown operation {name!r}: choose one of {', '.join(REGISTRY)}") from None
