"""The paper's measured values (De Sensi et al., SC24), shipped as package data: gpucomm/data/
paper_reference.csv, a derived table of the paper's public raw data (its provenance and columns
in paper_reference.md beside it)."""

from __future__ import annotations

import os
from importlib import resources

CSV_NAME = "paper_reference.csv"


def paper_csv() -> str:
    """Path of the shipped paper_reference.csv (an installed package has it as a file)."""
    path = resources.files("gpucomm.data").joinpath(CSV_NAME)
    # an installed package's data folder is a pathlib.Path; importlib's Traversable type has no __fspath__
    return os.fspath(path)  # type: ignore[call-overload]
