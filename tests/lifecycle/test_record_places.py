"""A run record names no place outside its folder: its top-level fields are the declared ones
(schema.named), a job's name is a shown text (no leading `/`, no `..` part), and no path of it
(records.PATH_FIELDS, or an override setting one: schema.PATH_KEYS) has a `..` part; a job's
own record, made portable, passes that check (records.portable)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dfl_bench import schema
from dfl_bench.lifecycle import records

REPO = Path(__file__).resolve().parents[2]
RECORD = json.loads((REPO / "results/records/formulas/00e405d5662423dd.json").read_text())
PARTS = ["..", ".", "a", "seed=0", "kb.formulas=[same", "1]", "..x", "x..", "'..'", ""]


@settings(max_examples=80, deadline=None)
@given(parts=st.lists(st.sampled_from(PARTS), min_size=1, max_size=5))
def test_a_jobs_name_is_refused_exactly_where_it_could_name_a_path_outside(parts):
    """Hydra's override_dirname may hold a `/` (`kb.formulas=[same/1]`); a name that starts
    with `/` or has a `..` part (quoted too) is no job's name."""
    name = "/".join(parts)
    record = {**copy.deepcopy(RECORD), "name": name}
    leaves = name.startswith("/") or any(p.strip("'") == ".." for p in parts)
    found = records.invalid(record)
    assert (found is not None) == leaves, (name, found)
    if leaves:
        assert found.startswith(f"name {name!r:.80} is no job's name"), found


@settings(max_examples=40, deadline=None)
@given(field=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1))
def test_a_top_level_field_the_schema_does_not_declare_makes_no_run_record(field):
    if schema.named(field):
        return
    found = records.invalid({**copy.deepcopy(RECORD), field: "x"})
    assert found == f"its field {field!r:.80} is no field of a run record (dfl_bench/schema.py)"


def test_a_jobs_paths_with_a_dotdot_part_are_written_resolved_and_then_pass(tmp_path):
    """A job run from `sub` with `checkpoint_dir=../c` (and such a data root, log folder and
    quoted override) writes each path resolved, relative where under a base, so the record
    check takes its own record (a rerun skips it)."""
    (tmp_path / "sub").mkdir()
    record = copy.deepcopy(RECORD)
    record["config"].update(checkpoint_dir="../c", records_dir="x/../../r")
    record["config"]["data"]["root"] = "../../outside"
    record["log_dir"] = "../logs/run"
    record["overrides"] += ["checkpoint_dir=../c", "+data.root='../../outside'"]
    out = records.portable(record, (tmp_path / "sub", tmp_path))
    assert out["config"]["checkpoint_dir"] == "c" and out["config"]["records_dir"] == "r"
    outside = str(tmp_path.parent.resolve() / "outside")  # under no base: absolute
    assert out["config"]["data"]["root"] == outside and out["log_dir"] == "logs/run"
    assert out["overrides"][-2:] == ["checkpoint_dir=c", f"+data.root={outside}"]
    assert records.invalid(out) is None
    assert records.invalid(record) is not None  # as given, its paths leave their folder
