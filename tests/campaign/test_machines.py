"""Seeds and machines: a seed's effect shared by the cells is removed before machines are
compared, so machines that trained different seeds differ by no seed's effect."""

from __future__ import annotations

import pandas as pd

from campaign import machines
from dfl_bench.results import load


def test_machines_that_trained_other_seeds_differ_by_nothing_once_the_seeds_effects_are_out():
    runs = pd.DataFrame(  # M trained seed 0 of each cell, N seed 1; seed 1 is 1 point better
        [
            ("a", 0, 95.0, "M"), ("a", 1, 96.0, "N"), ("b", 0, 93.0, "M"), ("b", 1, 94.0, "N"),
            ("c", 0, 91.0, "M"), ("c", 1, 92.0, "N"), ("d", 0, 90.0, None), ("d", 1, 91.0, None),
        ],
        columns=["configuration", "seed", "accuracy", "machine"],
    )  # fmt: skip
    assert machines.seed_effects(runs).round(9).to_dict() == {0: -0.5, 1: 0.5}
    (line,) = machines.effect_lines(runs)
    assert "0 -0.50, 1 +0.50 (shared beyond chance: permutation p = " in line
    assert "seed-to-seed variance is 0.000 of 0.500 points squared" in line  # all the seeds'
    assert machines.pooled_variance(runs) == 0.5  # (0.5^2 * 2) per cell, 1 degree of freedom
    assert "2 runs that name no machine left out" in line
    assert (
        "M +0.00 [+0.00, +0.00] over 3 cells: equivalent (90% [+0.00, +0.00] vs +-0.5; with the "
        "seeds' effects left in: -1.00 [-1.00, -1.00])"
    ) in line
    assert "N +0.00 [+0.00, +0.00] over 3 cells: equivalent" in line
    two = runs[runs["configuration"].isin(["a", "b", "d"])]  # a machine in 2 cells: not compared
    assert machines.effect_lines(two)[0].endswith(
        "no machine has runs in 3 cells beside another's."
    )


def test_a_seed_effect_is_shared_beyond_chance_only_when_the_cells_agree_on_it():
    cells = [f"c{i}" for i in range(12)]
    shared = pd.DataFrame(
        [(c, s, 95.0 + s + 0.01 * i, None) for i, c in enumerate(cells) for s in range(3)],
        columns=["configuration", "seed", "accuracy", "machine"],
    )
    assert machines.shared_seed_p(shared) < 0.001
    mixed = shared.assign(seed=[(s + i) % 3 for i in range(12) for s in range(3)])
    assert machines.shared_seed_p(mixed) > 0.5  # each cell's best seed another one


def test_a_records_machine_is_its_gpu_else_its_cpu_else_unnamed():
    named = [
        load.machine_name({"machine": machine})
        for machine in (
            {"gpu": "NVIDIA H200", "cpu": "AMD EPYC", "cpu_capability": "AVX2"},
            {"gpu": None, "cpu": "AMD EPYC", "cpu_capability": "AVX2"},
            None,
        )
    ]
    assert named == ["NVIDIA H200", "AMD EPYC (AVX2)", None]
