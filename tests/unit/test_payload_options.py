"""One table of payload options (contract.PAYLOAD_OPTIONS): it generates the payload's argparse
options and the checks' variables and their part of the payload's command line; a new option is
one row."""

import dataclasses

from gpucomm import contract
from gpucomm.constants import BW, PINGPONG
from gpucomm.contract import PAYLOAD_OPTIONS, PayloadOption
from gpucomm.payload import cli
from gpucomm.payload.ops import REGISTRY as OPS
from gpucomm.rfm import base


def _subparsers(parser):
    return parser._subparsers._group_actions[0].choices


def test_every_row_is_an_option_of_the_operations_that_take_it():
    for name, sub in _subparsers(cli.build_parser()).items():
        actions = {a.option_strings[0]: a for a in sub._actions if a.option_strings}
        for option in PAYLOAD_OPTIONS:
            if option.ops is not None and name not in option.ops:
                assert option.flag not in actions, (name, option.flag)
                continue
            action = actions[option.flag]
            assert action.dest == option.name and action.help == option.help, (name, option.flag)
            assert action.default == (False if option.action == "store_true" else option.default)
    # the table's --window is the windowed operations' (payload/ops: Operation.windowed)
    window = next(o for o in PAYLOAD_OPTIONS if o.flag == "--window")
    assert set(window.ops) == {n for n, op in OPS.items() if op.windowed} == {BW}


def test_every_row_with_a_variable_is_a_check_variable():
    space = base.GpucommCheck._rfm_var_space
    for option in PAYLOAD_OPTIONS:
        if option.variable:
            assert space[option.variable].default_value == option.unset, option.variable


def test_a_rows_part_of_the_command_line():
    iters, budget, window, loop, soak = (next(o for o in PAYLOAD_OPTIONS if o.variable == v)
                                         for v in ("iters", "budget", "window", "loop", "validate_every"))
    assert iters.command_line(0, PINGPONG) == [] and iters.command_line(50, PINGPONG) == ["--iters", "50"]
    assert budget.command_line(0.25, PINGPONG) == ["--budget", "0.25"] and budget.command_line(0.0, BW) == []
    assert window.command_line(16, BW) == ["--window", "16"] and window.command_line(16, PINGPONG) == []
    assert loop.command_line("auto", BW) == [] and loop.command_line("mpi4py", BW) == ["--loop", "mpi4py"]
    assert soak.command_line(3, BW) == []  # the soak's pair is rfm.base.soak_options'


def test_a_new_option_is_one_row(monkeypatch):
    row = PayloadOption("--spin", "spin first", kind="count", variable="spin", var_type="integer", unset=0)
    table = PAYLOAD_OPTIONS + (row,)
    for module in (contract, cli, base):
        monkeypatch.setattr(module, "PAYLOAD_OPTIONS", table)
    args = cli.build_parser().parse_args(["pingpong", "--method", "host", "--spin", "3"])
    assert args.spin == 3

    import reframe as rfm

    class Spun(rfm.RunOnlyRegressionTest):  # as GpucommCheck declares its own
        base.declare_option_variables(locals())

    assert Spun._rfm_var_space["spin"].default_value == 0
    assert row.command_line(3, PINGPONG) == ["--spin", "3"]
    assert dataclasses.replace(row, ops=(BW,)).command_line(3, PINGPONG) == []
