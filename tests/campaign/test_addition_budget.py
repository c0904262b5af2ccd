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
