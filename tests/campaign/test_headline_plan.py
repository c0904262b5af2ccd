"""The headline plan (results/headline_plan): the paper's gap at its budget, its seeds per cell
from the power calculation, trained by the seed plan's runner, decided by its declared rule."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from campaign import headline, headline_plan, seed_plan
from dfl_bench.results.paper import load_paper

PLAN = json.loads((headline_plan.FOLDER / "plan.json").read_text())


def test_the_committed_plan_gives_each_cell_the_seeds_of_its_power_calculation():
    assert PLAN["profile"] == "paper" and set(PLAN["cells"]) == {"best/both", "best/sum9"}
    seeds = {spec["seeds"] for spec in PLAN["cells"].values()}
    assert seeds == {max(headline_plan.MIN_SEEDS, PLAN["seeds_needed"])}
    assert PLAN["cells"]["best/both"]["override"] == "kb=both"


def test_the_gap_it_decides_is_the_papers_own():
    best = load_paper().tables["best"]
    paper = {cell.key: cell.number("accuracy") for cell in best.cells()}
    assert PLAN["decision"]["gap"] == pytest.approx(paper["both"] - paper["sum9"])


@pytest.mark.parametrize(
    ("both", "sum9", "verdict"),
    [
        ([98.0, 98.1, 97.9, 98.05], [97.6, 97.7, 97.65, 97.75], "holds"),
        ([97.5, 97.6, 97.55, 97.5], [97.5, 97.55, 97.6, 97.5], "fails"),  # gap shown below 0.3
        ([97.9, 97.3, 97.7, 97.5], [97.5, 97.3, 97.8, 97.4], "inconclusive"),
    ],
)
def test_the_declared_rule_decides_against_the_gaps_size(both, sum9, verdict):
    assert headline.decide(both, sum9)[0] == verdict


def test_the_seed_plans_runner_trains_its_cells_at_the_papers_budget(tmp_path):
    args = argparse.Namespace(
        sweeps=tmp_path, records="records", logger="none", device="cpu", jobs=1, stack_size=16,
        overrides=[],
    )  # fmt: skip
    finished = {"best/both": [0, 1, 2], "best/sum9": [0, 2]}
    commands = seed_plan.commands(PLAN, finished, args)
    both = commands["best/both"]
    assert both[:4] == [sys.executable, "-m", "dfl_bench", "-m"]
    assert {"+experiment=best", "kb=both", "profile=paper"} <= set(both)
    n = PLAN["cells"]["best/sum9"]["seeds"]
    assert f"seed={','.join(map(str, [1, *range(3, n)]))}" in commands["best/sum9"]
    assert Path(headline_plan.FOLDER / "README.md").read_text().count("holds") >= 1


@pytest.mark.parametrize("folder", ["missing", "empty"])
def test_a_plan_from_no_records_is_one_line(tmp_path, capsys, folder):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exit_:
        headline_plan.main(["--records-dir", str(tmp_path / folder), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.splitlines()[-1].startswith("python -m campaign")
    assert "is no folder" in err or "no sd to plan from" in err
    assert not (tmp_path / "o").exists()


def test_a_run_of_another_configuration_under_a_cells_row_is_no_input(tmp_path):
    """The plan's inputs are the runs of each cell's configuration at the paper's budget: a
    `kb=sum9 optimizer.lr=0.5` run is filed under row sum9 but counts for nothing."""
    from tests.results.test_results import write

    for seed, (both, sum9) in enumerate(((0.975, 0.972), (0.977, 0.976), (0.976, 0.970))):
        for kb, acc in (("both", both), ("sum9", sum9)):
            write(tmp_path, "best", kb, seed=seed, profile="paper", accuracy=acc,
                  extra_config={"kb": {"name": kb}})  # fmt: skip
    before = headline_plan.build_plan(tmp_path)["now"]
    other = {"kb": {"name": "sum9"}, "optimizer": {"lr": 0.5}}
    write(tmp_path, "best", "x", seed=40, profile="paper", accuracy=0.90, extra_config=other)
    now = headline_plan.build_plan(tmp_path)["now"]
    assert now == before and now["best/sum9"] == {"n": 3, "mean": 97.267, "sd": 0.306}
