"""Native tools the sites already trust (OSU micro-benchmarks, nccl-tests / rccl-tests): parsers
that turn their output into gpucomm records (same fields, same perf variable names as the
Python payload), so a report lines up tool against payload for one method and size."""

from .nccltests import parse_nccl_tests, parse_nccl_tests_json
from .osu import parse_osu

__all__ = ["parse_nccl_tests", "parse_nccl_tests_json", "parse_osu"]
