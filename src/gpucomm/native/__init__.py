"""Native tools the sites already trust (OSU micro-benchmarks, nccl-tests / rccl-tests), without
ReFrame: their command-line options (one builder per tool, for the checks and bench/compare),
parsers that turn their output into gpucomm records (same fields, same perf variable names as
the Python payload, so a report lines up tool against payload for one method and size), and
where their binaries are (tools).  The ReFrame checks over them are rfm.native's bases and
checks/native.py's leaves."""

from .nccltests import nccl_tests_options, parse_nccl_tests, parse_nccl_tests_json
from .osu import osu_options, parse_osu

__all__ = ["nccl_tests_options", "osu_options", "parse_nccl_tests", "parse_nccl_tests_json", "parse_osu"]
