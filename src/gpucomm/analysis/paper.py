"""The paper's measured values (De Sensi et al., SC24), shipped as package data: gpucomm/data/
paper_reference.csv, a derived table of the paper's public raw data (its provenance and columns
in paper_reference.md beside it)."""

import os
from importlib import resources

CSV_NAME = "paper_reference.csv"


def paper_csv():
    """Path of the shipped paper_reference.csv (an installed package has it as a file)."""
    path = resources.files("gpucomm.data").joinpath(CSV_NAME)
    return os.fspath(path)
