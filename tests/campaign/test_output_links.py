"""A campaign tool writes through no symbolic link: where its output file, or the folder it writes
in, is a link (dangling, or to a file or folder that exists), it says so in one line, exits 2 and
leaves the link's target as it was (a dangling link's target is not made)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from campaign import headline_plan, seed_plan

# tool -> (its arguments, with OUT for the output folder and RECORDS for a records folder; the
# file it writes in OUT)
TOOLS = {
    "commit_probe": (["--records-dir", "RECORDS", "--out", "OUT/probes.json"], "probes.json"),
    "recipe_search": (["--records-dir", "RECORDS", "--out", "OUT"], "digit_ceiling_search.md"),
    "collapse_search": (["--records-dir", "RECORDS", "--out", "OUT"], "README.md"),
    "addition_budget": (["--records-dir", "RECORDS", "--out", "OUT"], "README.md"),
    "addition_collapse": (["--out", "OUT"], "traces.json"),
    "seed_plan": (["plan", "--records-dir", "RECORDS", "--out", "OUT"], "plan.json"),
    "headline_plan": (["--records-dir", "RECORDS", "--out", "OUT"], "plan.json"),
}
PLAN = {"profile": "long", "cells": {}}  # a plan of nothing: what is written does not matter


def _run(tool: str, out: Path, records: Path, monkeypatch) -> int:
    """The tool's main on `out` and `records` (the plans built from nothing: their writing is
    what is tried)."""
    monkeypatch.setattr(seed_plan, "build_plan", lambda records_dir: PLAN)
    monkeypatch.setattr(headline_plan, "build_plan", lambda records_dir: {**PLAN, "cells": 0})
    for planner in (seed_plan, headline_plan):
        monkeypatch.setattr(planner, "readme", lambda p: "# plan\n\nWritten by `python -m x`\n")
    args, _ = TOOLS[tool]
    argv = [a.replace("OUT", str(out)).replace("RECORDS", str(records)) for a in args]
    return importlib.import_module(f"campaign.{tool}").main(argv)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("link", ["dangling", "to a file", "the folder"])
def test_a_tool_writes_through_no_symbolic_link(tool, link, tmp_path, monkeypatch, capsys):
    records, out, elsewhere = tmp_path / "records", tmp_path / "out", tmp_path / "elsewhere"
    records.mkdir()
    elsewhere.mkdir()
    if tool == "seed_plan":  # a plan is made from a folder holding records
        (records / "same_symmetric").mkdir()
        (records / "same_symmetric" / "0123456789abcdef.json").write_text("{}")
    name = TOOLS[tool][1]
    target = elsewhere / name
    if link == "the folder":  # the output folder itself a link to another folder
        out.symlink_to(elsewhere, target_is_directory=True)
    else:
        out.mkdir()
        if link == "to a file":
            target.write_text("kept\n")
        (out / name).symlink_to(target)
    assert _run(tool, out, records, monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a symbolic link" in err, err
    if link == "to a file":
        assert target.read_text() == "kept\n"
    else:
        assert list(elsewhere.iterdir()) == []  # nothing made there
