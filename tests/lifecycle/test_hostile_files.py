"""Files from others, generated hostile (hypothesis): a record or a plan whose fields are any
JSON, whose texts carry interpolations, escapes, terminal codes and paths that leave their
folder. Every tool that reads them (the harvest, the migration, the renderer's loader, the
commit probe's override check, the plan reader) answers with a result or one ValueError line:
no other exception, nothing written outside its folders, no secret in anything it returns."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

SECRET = "sekrit-value-42"
HOSTILE_TEXTS = st.sampled_from(
    [
        "${oc.env:DFL_TEST_SECRET}", "$\\{oc.env:DFL_TEST_SECRET\\}", "../../../../elsewhere",
        "/etc/passwd", "\x1b]0;TITLE\x07\x1b[2K", "kb=both\nseed=1", "a" * 300,
        "hydra.job.env_set={X:1}", "--experimental-rerun=x.pickle", "+task._target_=os.system",
        "data.cache_dir=/tmp/c", "records_dir=../out", "row=f1", "kb=sum9", "",
        "kb.w_dfl=$\\{oc.env:DFL_TEST_SECRET\\}", "row=f1,f2", "kb.w_dfl=range(1,9)",
        "x/../../../escaped", "data={cache_dir:../../../../elsewhere}", "++data={root:/tmp/x}",
        "+trainer.default_root_dir=/tmp/x", "~kb=same", "~data=", "data=5", "model=null",
        "+model.foo=1",
    ]
)  # fmt: skip
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | HOSTILE_TEXTS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE_TEXTS, inner, max_size=4),
    max_leaves=12,
)
REPO = Path(__file__).resolve().parents[2]


def _base_record() -> dict:
    return json.loads(next((REPO / "results/records/formulas").glob("*.json")).read_text())


def _spoiled(fields: dict) -> dict:
    """A committed record with some fields replaced by hostile values."""
    return {**_base_record(), **fields}


RECORD_FIELDS = st.dictionaries(
    st.sampled_from(["name", "row", "overrides", "config", "status", "git_commit", "seed",
                     "experiment", "log_dir", "reused_from", "test_accuracy", "profile"]),
    JSON | st.lists(HOSTILE_TEXTS, max_size=4),
    max_size=4,
)  # fmt: skip


def _files_outside(root: Path, before: set[Path]) -> set[Path]:
    return {p for p in root.parent.rglob("*") if not p.is_relative_to(root)} - before


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(fields=RECORD_FIELDS)
@example(fields={"overrides": ["row=f1", "kb.w_dfl=$\\{oc.env:DFL_TEST_SECRET\\}"]})
@example(fields={"overrides": ["row=f1", "data.cache_dir=/tmp/elsewhere"], "name": "\x1b]0;T\x07"})
@example(fields={"overrides": ["row=f1", "data={cache_dir:../../../../elsewhere}"]})
@example(fields={"overrides": ["+trainer.default_root_dir=/tmp/x", "~kb=same"]})
def test_a_hostile_record_gets_a_result_or_one_line_from_every_tool(fields, tmp_path_factory):
    import warnings

    from campaign.commit_probe import probe_overrides
    from campaign.migrate_records import migrate_folder
    from dfl_bench.lifecycle.file_overrides import PATH_KEYS
    from dfl_bench.reproduction import harvest
    from dfl_bench.results.load import load_records

    os.environ["DFL_TEST_SECRET"] = SECRET
    base = tmp_path_factory.mktemp("hostile")
    root = base / "records"
    (root / "formulas").mkdir(parents=True)
    record = _spoiled(fields)
    path = root / "formulas" / "0123456789abcdef.json"
    path.write_text(json.dumps(record))
    before = set(base.parent.rglob("*")) - set(base.rglob("*"))
    outputs = []
    try:
        outputs.append(str(harvest.harvest(root, base / "dest", "results/records")))
    except ValueError as err:
        outputs.append(str(err))
    try:
        migrate_folder(root)
    except ValueError as err:
        outputs.append(str(err))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_records(root)
    outputs.append(frame.to_json())
    overrides = record.get("overrides")
    try:
        accepted = probe_overrides(overrides)
    except ValueError as err:
        outputs.append(str(err))
    else:  # what a probe would train: no interpolation in any spelling, no path set
        assert not any(c in o for o in accepted for c in ("$", "\\", "..", "\n"))
        assert not any(o.split("=")[0].lstrip("+~") in PATH_KEYS for o in accepted)
        assert not any(o.startswith("~") or "{" in o or "[" in o for o in accepted)
        assert not any(o.lstrip("+").startswith(("trainer.", "logger.")) for o in accepted)
    assert not any(SECRET in text for text in outputs)
    assert _files_outside(base, before) == set()  # nothing written beside its folders


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cell=HOSTILE_TEXTS | st.text(max_size=40), spec=JSON)
def test_a_hostile_plan_is_refused_in_one_line_before_anything_runs(cell, spec, tmp_path_factory):
    from campaign.plan_file import read_plan

    folder = tmp_path_factory.mktemp("plan")
    plan_file = folder / "plan.json"
    plan_file.write_text(json.dumps({"profile": "paper", "cells": {f"best/{cell}": spec}}))
    try:
        read_plan(plan_file)
    except ValueError as err:
        assert "\n" not in str(err).strip() and SECRET not in str(err)
        return
    # accepted: a plain cell name with a whole number of seeds and a plain override only
    assert ".." not in cell and "$" not in cell and "/" not in cell
    assert isinstance(spec, dict) and type(spec.get("seeds")) is int


def test_the_generated_hostile_texts_include_what_the_probes_found():
    texts = HOSTILE_TEXTS.elements
    assert "$\\{oc.env:DFL_TEST_SECRET\\}" in texts and "../../../../elsewhere" in texts
    assert "row=f1,f2" in texts and "x/../../../escaped" in texts
    assert "data={cache_dir:../../../../elsewhere}" in texts and "~kb=same" in texts
