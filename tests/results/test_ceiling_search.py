"""Each network's ceiling recipe is the declared rule's choice on validation records only
(campaign/ceiling_search.py): the rule waits for every seed, prefers fewer steps within its
margin, counts no shortened or test-stage run, and the search's networks are conf/net's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from campaign import ceiling_search

REPO = Path(__file__).resolve().parents[2]


def test_the_rule_prefers_fewer_steps_within_its_margin_and_waits_for_every_seed():
    rows = [
        {"row": "short", "steps": 1, "values": [99.40, 99.45, 99.50]},
        {"row": "long", "steps": 4, "values": [99.50, 99.50, 99.50]},
    ]
    assert ceiling_search.choose(rows, 3, 0.05) == "short"  # 99.45 lies within 0.05 of 99.50
    assert ceiling_search.choose(rows, 3, 0.04) == "long"
    assert ceiling_search.choose([{**rows[0], "values": [99.0]}, rows[1]], 3, 0.05) is None


def test_the_searchs_networks_are_the_ones_conf_net_gives():
    spec = yaml.safe_load((REPO / "conf/experiment/digit_ceiling_search.yaml").read_text())
    for name, net in spec["nets"].items():
        assert net == yaml.safe_load((REPO / f"conf/net/{name}.yaml").read_text())
    assert {row["net"] for row in spec["rows"].values()} == set(spec["nets"])
    assert spec["rule"]["metric"] == "validation_accuracy" and spec["stages"]["final"] == 0.0


def _run(row: str, seed: int, stage: str, steps: int, acc: float) -> dict:
    """One ok run as the records' frame (results.load) holds it: what the rule reads."""
    return {
        "experiment": "digit_ceiling_search", "status": "ok", "row": row, "seed": seed,
        "steps": steps, "test_accuracy": acc, "validation_accuracy": acc,
        "config": {"stage": stage, "row": row, "seed": seed},
    }  # fmt: skip


def test_only_full_validation_runs_count_and_the_chosen_row_is_printed(
    tmp_path, capsys, monkeypatch
):
    rows = yaml.safe_load((REPO / "conf/experiment/digit_ceiling_search.yaml").read_text())["rows"]
    lenet = {r: e for r, e in rows.items() if e["net"] == "lenet"}
    runs = [
        _run(row, seed, "search", entry["steps"], 0.99 + i / 1000)
        for i, (row, entry) in enumerate(lenet.items())
        for seed in range(3)
    ]
    # a shortened run of a lower candidate counts for nothing; a final-stage run neither
    runs += [
        _run("lenet_const_1x", 3, "search", 10, 1.0),
        _run("lenet_const_1x", 4, "final", 25000, 1.0),
    ]
    monkeypatch.setattr(ceiling_search, "records_frame", lambda _: pd.DataFrame(runs))
    assert ceiling_search.main(["--records-dir", str(tmp_path), "--chosen", "lenet"]) == 0
    assert capsys.readouterr().out.strip() == "lenet_warm_cos_4x_aug"  # the highest
    values = ceiling_search.stage_values(pd.DataFrame(runs), "search", "validation_accuracy")
    assert len(values["lenet_const_1x"]) == 3
    assert ceiling_search.stage_values(pd.DataFrame(runs), "final", "test_accuracy") == {
        "lenet_const_1x": [100.0]
    }
    assert ceiling_search.main(["--records-dir", str(tmp_path), "--chosen", "bn_deep"]) == 3
    with pytest.raises(SystemExit):
        ceiling_search.main(["--records-dir", str(tmp_path), "--chosen", "resnet"])
