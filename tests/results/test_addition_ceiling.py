"""results/addition_ceiling/: the digit network's supervised ceiling at the frontier's budget,
stated in its README from its records (each number there is a record's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[2] / "results" / "addition_ceiling"


def test_the_readme_states_each_record_and_only_them():
    records = [json.loads(p.read_text()) for p in sorted(FOLDER.rglob("*.json"))]
    rows = re.findall(
        r"^\| (\d+) \| (\d+) \| (\d+\.\d\d) \| (\d+\.\d\d) \| `([0-9a-f]{7})` \|$",
        (FOLDER / "README.md").read_text(),
        re.M,
    )
    stated = sorted((int(s), int(b), float(f), float(best), c) for s, b, f, best, c in rows)
    assert len(records) >= 3 and stated == sorted(
        (
            r["seed"],
            r["config"]["data"]["batch_size"],
            round(100 * r["test_accuracy"], 2),
            round(100 * r["best_test_accuracy"], 2),
            r["git_commit"][:7],
        )
        for r in records
    )
    assert all(r["status"] == "ok" and r["profile"] == "frontier" for r in records)
