"""Where a job's nodes sit on the network, from what Slurm itself says of them.

``scontrol show topology NODES`` (scontrol(1): "If more than one node name is specified, only
switches that connect to all named nodes will be shown"; a hostlist expression names them) prints
one line per such switch, ``SwitchName=<name> Level=<n> LinkSpeed=<n> Nodes=... Switches=...``
(Slurm's topology/tree plugin, src/plugins/topology/tree); level 0 is a leaf switch.  The lowest
level among them is where the nodes meet: 0 the same leaf switch, 1 the switch above the leaves
(different switches), higher a level above that (different groups), the same distances as
SLURM_TOPOLOGY_ADDR's (gpucomm.pairs.switch_distance).  Without the tree plugin scontrol says
"No topology information available", which is reported as the reason the placement is unknown.
"""

from __future__ import annotations

import re

from ..constants import PLACEMENTS

#: the command a job runs to record its nodes' switches (rfm.mixins.MultiNode.topology_cmds)
SOURCE = "scontrol show topology"

_SWITCH = re.compile(r"^SwitchName=(\S+)\s+Level=(\d+)")


def switches(text: str) -> list[tuple[str, int]]:
    """[(switch name, level)] of ``scontrol show topology`` output."""
    found = []
    for line in text.splitlines():
        m = _SWITCH.match(line.strip())
        if m:
            found.append((m.group(1), int(m.group(2))))
    return found


def placement_of_switches(text: str) -> tuple[str, str]:
    """(distance, source) of the nodes ``scontrol show topology NODES`` was asked about: the
    lowest level of a switch that connects them all; ('unknown', why) where it lists none."""
    found = switches(text)
    if not found:
        said = next((ln.strip() for ln in text.splitlines() if ln.strip()), "no output")
        return "unknown", f"{SOURCE}: {said}"
    name, level = min(found, key=lambda s: s[1])
    return PLACEMENTS[min(level, 2)], f"{SOURCE}: switch {name} (level {level}) connects the nodes"
