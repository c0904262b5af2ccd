"""The final rows of MNIST addition (campaign/final_nets.py): each row's recipe is a row of its
search copied whole and trains only once that search's rule chose it; the page counts every seed
of a row (collapsed ones in the mean, their count beside), no seed the row does not declare and
no shortened run; the script trains nothing before the choice."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from campaign import final_nets, rule_runs
from campaign.addition_budget import records_frame
from dfl_bench.results import cell_configs
from dfl_bench.tasks import contract

REPO = Path(__file__).resolve().parents[2]
SPEC = rule_runs.declared(final_nets.EXPERIMENT)
SEARCH = SPEC["rule"]["recipes_from"]


def _run(experiment: str, row: str, seed: int, steps: int, acc: float, **fields) -> dict:
    """One ok run as the records' frame (results.load) holds it: what the page and rules read."""
    return {
        "experiment": experiment, "status": "ok", "row": row, "seed": seed, "steps": steps,
        "test_accuracy": acc, "validation_accuracy": acc, "config": {"row": row, "seed": seed},
        "configuration": rule_runs.row_digest(experiment, row, rule_runs.SEARCH),
        "profile": "long", "reused_from": None, "finished": "",
        "path": f"{experiment}/{row}-{seed}.json", "digit_accuracy": 0.99, "wall_time_s": 600.0,
        **fields,
    }  # fmt: skip


def _search_runs(winner: str) -> list[dict]:
    """Every candidate and declared incumbent of the search with its seeds, `winner` two points
    above the others."""
    spec = rule_runs.declared(SEARCH)
    rows = [(SEARCH, row, entry["steps"]) for row, entry in spec["rows"].items()]
    rows += [(i["experiment"], i["row"], i["steps"]) for i in spec["rule"].get("incumbents", [])]
    return [
        _run(experiment, row, seed, steps, 0.82 + (0.02 if row == winner else 0.0))
        for experiment, row, steps in rows
        for seed in range(3)
    ]


def _declared_recipes() -> dict[str, str]:
    return {entry["net"]["name"]: entry["recipe"]["row"] for entry in SPEC["rows"].values()}


def test_each_rows_recipe_is_a_row_of_its_search_copied_whole():
    assert final_nets.recipe_faults() == {}
    row, entry = next(iter(SPEC["rows"].items()))
    changed = copy.deepcopy(SPEC)
    changed["rows"][row]["recipe"]["steps"] += 1
    assert "copied whole" in final_nets.recipe_faults(changed)[row]
    other = next(r for r, e in rule_runs.declared(SEARCH)["rows"].items() if e["net"] == "lenet")
    changed["rows"][row]["recipe"] = {**entry["recipe"], "row": other}
    assert "is no bn_deep row" in final_nets.recipe_faults(changed)[row]


def test_a_row_that_trains_otherwise_than_its_recipe_is_named_with_what_differs(monkeypatch):
    compose = final_nets.cell_configs.cell_config
    row, entry = next((r, e) for r, e in SPEC["rows"].items() if e.get("target") is not None)

    def other_rate(experiment, *args):
        config = compose(experiment, *args)
        if experiment == final_nets.EXPERIMENT:
            config = {**config, "optimizer": {**config["optimizer"], "lr": 0.003}}
        return config

    assert final_nets.drift(row, entry, SEARCH) == []
    monkeypatch.setattr(final_nets.cell_configs, "cell_config", other_rate)
    assert final_nets.drift(row, entry, SEARCH) == ["optimizer.lr"]
    assert "optimizer.lr" in final_nets.recipe_faults()[row]


def test_a_row_trains_only_once_its_searchs_rule_chose_its_recipe(tmp_path, monkeypatch, capsys):
    recipes = _declared_recipes()
    chosen = pd.DataFrame([r for rec in set(recipes.values()) for r in _search_runs(rec)])
    assert final_nets.unchosen(chosen) == {}
    net, recipe = next(iter(recipes.items()))
    rival = next(r for r, e in rule_runs.declared(SEARCH)["rows"].items()
                 if e["net"] == net and r != recipe)  # fmt: skip
    elsewhere = pd.DataFrame(_search_runs(rival))
    waiting = final_nets.unchosen(elsewhere)
    ours = {row for row, e in SPEC["rows"].items() if e["net"]["name"] == net}
    assert ours <= set(waiting) and f"chose {rival} for {net}" in waiting[min(ours)]
    monkeypatch.setattr(final_nets, "records_frame", lambda _: elsewhere)
    assert final_nets.main(["--check", "--records-dir", str(tmp_path)]) == 2
    assert f"row {min(ours)}: " in capsys.readouterr().err
    monkeypatch.setattr(final_nets, "records_frame", lambda _: chosen)
    assert final_nets.main(["--check", "--records-dir", str(tmp_path)]) == 0


def test_the_page_counts_every_seed_its_collapses_and_no_undeclared_or_short_run():
    targeted = next(r for r, e in SPEC["rows"].items() if e.get("target") is not None)
    fewer = next(r for r, e in SPEC["rows"].items() if e.get("seeds", 5) < SPEC["rule"]["seeds"])
    steps = {r: e["recipe"]["steps"] for r, e in SPEC["rows"].items()}
    runs = [_run(final_nets.EXPERIMENT, targeted, s, steps[targeted], 0.8 + s / 100,
                 wall_time_s=60 * (33 + 3 * s)) for s in range(4)]  # fmt: skip
    runs += [
        # a collapsed seed: counted in the mean, named in the count
        _run(final_nets.EXPERIMENT, targeted, 4, steps[targeted], 0.0, digit_accuracy=0.1),
        # a shortened run and a seed the rule does not declare count for nothing
        _run(final_nets.EXPERIMENT, targeted, 5, steps[targeted], 1.0),
        _run(final_nets.EXPERIMENT, fewer, 2, 10, 1.0),
        *(_run(final_nets.EXPERIMENT, fewer, s, steps[fewer], 0.5) for s in (0, 1, 3, 4)),
    ]
    frame = pd.DataFrame(runs + _search_runs(SPEC["rows"][targeted]["recipe"]["row"]))
    rows = {r.row: r for r in final_nets.finals(frame)}
    assert rows[targeted].values == (80.0, 81.0, 82.0, 83.0, 0.0)
    assert rows[targeted].collapsed(SPEC["rule"]["collapse_below"]) == 1
    assert rows[fewer].values == (50.0, 50.0)  # seeds 0 and 1 of its 3
    page = final_nets.report(frame)
    line = next(x for x in page.splitlines() if x.startswith(f"| `{targeted}`"))
    assert "| 5 of 5 | 65.20 ± 36.47 | 1 of 5 |" in line
    assert "1 of 5 over 41.8 (longest 42.0)" in line
    assert "points under (" in line  # 65.20 against its target
    block = final_nets.block(frame)
    assert f"`{targeted}` 65.20 ± 36.47 (n=5 of 5, 1 collapsed;" in block
    assert "none collapsed" not in block
    missed = "mean missed by 16.80 (its interval: inconclusive); 1 collapsed: missed; time missed"
    assert f"against its target 82: {missed} by 1" in block
    # a seed short (a failed run leaves no record): no row decided, the count says so
    short = final_nets.block(frame[frame["seed"] != 4])
    assert f"`{targeted}` 81.50 ± 1.29 (n=4 of 5," in short
    assert "waits for its seeds (4 of 5)" in short and "points above" not in short


def test_no_published_number_is_faced_before_every_declared_seed_has_a_run():
    """Three seeds would decide (MIN_SEEDS), but a row of five waits for its five: the same
    rule as its target's."""
    targeted = next(r for r, e in SPEC["rows"].items() if e.get("target") is not None)
    steps = SPEC["rows"][targeted]["recipe"]["steps"]
    runs = [_run(final_nets.EXPERIMENT, targeted, s, steps, 0.99 - s / 1000) for s in range(5)]
    frame = pd.DataFrame(runs + _search_runs(SPEC["rows"][targeted]["recipe"]["row"]))
    for seeds, decided in ((3, False), (4, False), (5, True)):
        rows = final_nets.finals(frame[frame["seed"] < seeds])
        found = [c for c in final_nets.faced(rows) if c.row == targeted]
        assert found and all((c.decided is not None) == decided for c in found)
        page = final_nets.report(frame[frame["seed"] < seeds])
        assert (f"waits for its final seeds ({seeds} of 5), not compared" in page) != decided
        assert ("ours +" in page) == decided  # 98.8 is above every published number
    assert "mean met (its interval: above)" in final_nets.block(frame)
    near = frame.assign(test_accuracy=[0.82 + (-1) ** s * 0.001 * s for s in frame["seed"]])
    assert "mean met (its interval: inconclusive)" in final_nets.block(near)  # 82.04


def test_a_diverged_seed_counts_as_collapsed_at_zero_and_an_interrupted_one_for_nothing():
    targeted = next(r for r, e in SPEC["rows"].items() if e.get("target") is not None)
    steps = SPEC["rows"][targeted]["recipe"]["steps"]
    runs = [_run(final_nets.EXPERIMENT, targeted, s, steps, 0.9) for s in range(4)]
    lost = {"status": "failed", "test_accuracy": None, "digit_accuracy": None, "wall_time_s": 9.0}
    diverged = {**lost, "reason": contract.nonfinite_reason(1234, "dfl")}
    cut = {**lost, "reason": "no final evaluation: training ended at step 1234"}
    frame = pd.DataFrame([*runs, _run(final_nets.EXPERIMENT, targeted, 4, 1234, 0.0, **cut)])
    row = next(r for r in final_nets.finals(frame) if r.row == targeted)
    assert row.values == (90.0,) * 4  # an interruption trains again
    frame = pd.DataFrame([*runs, _run(final_nets.EXPERIMENT, targeted, 4, 1234, 0.0, **diverged)])
    row = next(r for r in final_nets.finals(frame) if r.row == targeted)
    assert (row.values, row.digits[-1], row.diverged) == ((90.0,) * 4 + (0.0,), 0.0, 1)
    assert row.collapsed(SPEC["rule"]["collapse_below"]) == 1
    line = next(x for x in final_nets.report(frame).splitlines() if x.startswith(f"| `{targeted}`"))
    assert "| 5 of 5 | 72.00 ± 40.25 | 1 of 5 (1 diverged) |" in line
    assert row.minutes == (10.0,) * 4  # its short time says nothing of the limit
    assert "(n=5 of 5, 1 collapsed (1 diverged); wall time" in final_nets.block(frame)


def test_a_row_of_more_seeds_than_the_rule_counts_is_refused():
    row = next(iter(SPEC["rows"]))
    changed = copy.deepcopy(SPEC)
    changed["rows"][row]["seeds"] = SPEC["rule"]["seeds"] + 1  # the rule counts no more
    assert "more seeds than the rule's" in final_nets.recipe_faults(changed)[row]


def test_committed_final_records_trained_their_searchs_choice():
    frame = records_frame(REPO / cell_configs.RECORDS)
    trained = set(frame.loc[frame["experiment"] == final_nets.EXPERIMENT, "row"])
    assert trained.isdisjoint(final_nets.unchosen(frame)), final_nets.unchosen(frame)


@pytest.mark.slow
def test_the_script_trains_nothing_before_the_choice(tmp_path):
    empty, records = tmp_path / "empty", tmp_path / "records"
    empty.mkdir()
    env = {**os.environ, "FINALS_CHOICE_RECORDS": str(empty), "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        ["bash", "scripts/final_nets.sh", sys.executable, str(records), "1"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nothing trained" in proc.stdout and "chose nothing yet" in proc.stderr
    assert not records.exists()


def test_a_frozen_folder_of_another_commit_is_refused_not_resumed(tmp_path):
    """make's frozen stages resume a folder only at the commit its checkout holds."""
    (tmp_path / "checkout" / "dfl_bench").mkdir(parents=True)
    (tmp_path / "commit").write_text("0" * 40 + "\n")
    proc = subprocess.run(
        ["make", "--no-print-directory", "addition-finals", f"FINALS_DIR={tmp_path}"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"holds a checkout of {'0' * 40}, not of HEAD" in proc.stdout + proc.stderr
    assert not (tmp_path / "records").exists() and not (tmp_path / "finals.log").exists()


def test_the_figure_draws_every_seed_a_collapsed_one_apart_the_mean_and_the_target(monkeypatch):
    from campaign import final_figure
    from dfl_bench.results import figures

    targeted = next(r for r, e in SPEC["rows"].items() if e.get("target") is not None)
    steps = SPEC["rows"][targeted]["recipe"]["steps"]
    runs = [_run(final_nets.EXPERIMENT, targeted, s, steps, 0.9) for s in range(4)]
    runs.append(_run(final_nets.EXPERIMENT, targeted, 4, steps, 0.0, digit_accuracy=0.01))
    drawn = []
    monkeypatch.setattr(figures, "write_png", lambda fig, path: drawn.append(fig) or path)
    final_figure.draw(pd.DataFrame(runs), Path("seeds.png"))
    ax = drawn[0].axes[0]
    x = list(SPEC["rows"]).index(targeted)
    seeds = [
        [round(float(y), 6) for px, y in c.get_offsets() if abs(px - x) < 0.2]
        for c in ax.collections
        if type(c).__name__ == "PathCollection"
    ]
    assert [ys for ys in seeds if ys] == [[90.0] * 4, [0.0]]  # the collapsed one drawn apart
    levels = sorted(
        round(float(seg[0][1]), 6)
        for c in ax.collections
        if type(c).__name__ == "LineCollection"
        for seg in c.get_segments()
        if abs((seg[0][0] + seg[1][0]) / 2 - x) < 1e-9
    )
    assert levels == sorted([72.0, float(SPEC["rows"][targeted]["target"])])  # mean, target
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert len(ticks) == len(SPEC["rows"]) and "5 of 5 seeds" in ticks[x]
