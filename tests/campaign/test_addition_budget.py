"""The frontier's budget per network is the declared rule's choice on the committed records
(campaign/addition_budget.py); the committed README is what the records give."""

from __future__ import annotations

from pathlib import Path

from campaign import addition_budget

REPO = Path(__file__).resolve().parents[2]


def test_the_rule_takes_the_fewest_steps_within_its_margin_and_waits_for_every_seed():
    rows = [
        {"row": "short", "steps": 1, "values": [70.0, 71.0, 72.0]},
        {"row": "long", "steps": 2, "values": [72.0, 72.0, 72.0]},
    ]
    assert addition_budget.choose(rows, 3, 1.0) == "short"  # 71 is within 1 of 72
    assert addition_budget.choose(rows, 3, 0.5) == "long"
    assert addition_budget.choose([{**rows[0], "values": [70.0]}, rows[1]], 3, 1.0) is None


def test_the_committed_choice_is_what_the_committed_records_give():
    committed = (REPO / "results" / "addition_budget" / "README.md").read_text()
    assert committed == addition_budget.report(REPO / "results" / "records")
    assert committed.count("**chosen**") == 2  # one budget per network


def test_the_report_counts_the_candidates_the_fewest_steps_reading_chooses_among():
    rows = [
        {"row": "a", "steps": 1, "values": [71.5] * 3},
        {"row": "b", "steps": 2, "values": [71.8] * 3},
        {"row": "c", "steps": 4, "values": [72.0] * 3},
    ]
    top, near = addition_budget.best_and_near(rows, 1.0)
    assert top["row"] == "c" and [r["row"] for r in near] == ["a", "b"]  # two: the reading
    assert addition_budget.choose(rows, 3, 1.0) == "a"  # decides between them
    committed = (REPO / "results" / "addition_budget" / "README.md").read_text()
    assert "`lenet` 1 (`lenet_e50`), `bn_wide` 1 (`bn_wide_e25`)" in committed


def test_a_run_of_another_configuration_or_seed_under_a_row_counts_for_nothing():
    """A committed budget record copied with another rate or held-out share (its own cell hash)
    or to a seed beyond the rule's three, under the same row: the values are as before; the same
    record at a declared seed it lacks counts."""
    import copy

    import pandas as pd

    from dfl_bench.lifecycle import records

    frame = addition_budget.records_frame(REPO / "results" / "records")
    before = addition_budget.validation_values(frame)
    mine = frame[(frame["experiment"] == addition_budget.EXPERIMENT) & (frame["seed"] == 0)]
    run = mine[mine["row"] == "lenet_e25"].iloc[0].to_dict()

    def changed(key: str, value: float) -> dict:
        config = copy.deepcopy(run["config"])
        config[key.split(".")[0]][key.split(".")[1]] = value
        return {**run, "config": config, "configuration": records.cell_hash(config)}

    other = [changed("optimizer.lr", 0.02), changed("task.validation", 0.5), {**run, "seed": 3}]
    other = [{**r, "validation_accuracy": 0.01} for r in other]
    assert addition_budget.validation_values(pd.concat([frame, pd.DataFrame(other)])) == before
    without = frame[~((frame["row"] == "lenet_e25") & (frame["seed"] == 2))]
    again = pd.concat([without, pd.DataFrame([{**run, "seed": 2, "validation_accuracy": 0.01}])])
    assert addition_budget.validation_values(again)["lenet_e25"][-1] == 1.0
