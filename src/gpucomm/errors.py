"""Errors the payload reports as one line and an exit code (never a traceback)."""

from __future__ import annotations

from .constants import EXIT_BAD_INPUT, EXIT_CAPABILITY, EXIT_IMPLAUSIBLE, EXIT_VALIDATION


class GpucommError(Exception):
    """Bad input or a failed run; the message is shown to the user as is."""

    exit_code: int = EXIT_BAD_INPUT
    #: every rank raised it identically (collective())
    collective: bool = False


class CapabilityError(GpucommError):
    """The method or operation cannot run on this machine (no GPU, no NCCL, MPI not GPU-aware)."""

    exit_code = EXIT_CAPABILITY


class ValidationError(GpucommError):
    """Received data did not match what was sent."""

    exit_code = EXIT_VALIDATION


class PlausibilityError(GpucommError):
    """A measured bandwidth is above the link's nominal limit: a measurement bug."""

    exit_code = EXIT_IMPLAUSIBLE


def collective(exc: GpucommError) -> GpucommError:
    """Mark an error that every rank raises identically (printed once, no MPI_Abort)."""
    exc.collective = True
    return exc
