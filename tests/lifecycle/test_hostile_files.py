"""Files from others, generated hostile (hypothesis): a record or a plan whose fields are any
JSON, whose texts carry interpolations, escapes, terminal codes and paths that leave their
folder, and whose config values are of kinds no job accepts. Every tool that reads them (the
harvest, the migration, the renderer's loader and a table, the commit probe's cells and override
check, the plan reader) answers with a result or one ValueError line: no other exception,
nothing written outside its folders, no secret and no control character in anything it returns
or renders."""

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
                     "experiment", "log_dir", "reused_from", "test_accuracy", "profile",
                     "finished", "started", "reason", "\x1b]0;T\x07"]),
    JSON | st.lists(HOSTILE_TEXTS, max_size=4) | st.sampled_from([2**63, "a" * 250, "quick",
                                                                 10**400]),
    max_size=4,
)  # fmt: skip
# Config values a tool reads, as no job would take them (a dotted key into the record's config).
CONFIG_FIELDS = st.dictionaries(
    st.sampled_from(["optimizer.lr", "tnorm.name", "tnorm.p", "kb.name", "kb.w_dfl",
                     "profile.name", "row", "experiment_name", "task.digits", "threads",
                     "tnorm.\x1b[2K", "\x1b]0;T\x07", "provenance.kb.\x1b[1A", "kb.scale",
                     "model.ntn_k", "data.labeled_fraction", "data.batch_size", "augment.degrees"]),
    JSON | st.sampled_from([2**63, "abc", 5, ["same"], {"a": 1}, "a" * 250, -5, 64.5, "false",
                            "m\u0435an", 10**400, -(10**400), float("nan"), float("inf")]),
    max_size=3,
)  # fmt: skip


def _set(config: dict, dotted: str, value) -> None:
    """`config` with `value` at the dotted key (a parent that is no mapping becomes one)."""
    *parents, key = dotted.split(".")
    for name in parents:
        if not isinstance(config.get(name), dict):
            config[name] = {}
        config = config[name]
    config[key] = value


def _printable(text: str) -> bool:
    """One or more lines of printable text (no terminal escape, no other control character)."""
    return all(line.isprintable() for line in text.split("\n"))


def _files_outside(root: Path, before: set[Path]) -> set[Path]:
    return {p for p in root.parent.rglob("*") if not p.is_relative_to(root)} - before


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(fields=RECORD_FIELDS, config=CONFIG_FIELDS)
@example(fields={"overrides": ["row=f1", "kb.w_dfl=$\\{oc.env:DFL_TEST_SECRET\\}"]}, config={})
@example(
    fields={"overrides": ["row=f1", "data.cache_dir=/tmp/elsewhere"], "name": "\x1b]0;T\x07"},
    config={},
)
@example(fields={}, config={})  # unspoiled: counted in its cell, which has two commits
@example(fields={"git_commit": ["a", "b"]}, config={})
@example(fields={"git_commit": {"x": 1}, "reason": "\x1b]0;T\x07\n| row |"}, config={})
@example(fields={"finished": {"a": 1}}, config={})
@example(fields={"reused_from": ["x"]}, config={})
@example(fields={"profile": "p" * 250}, config={"profile.name": "p" * 250})
@example(fields={"seed": 2**63}, config={"seed": 2**63})
@example(fields={}, config={"optimizer.lr": "abc", "tnorm.name": 5})
@example(fields={}, config={"kb.name": ["same"]})
@example(fields={}, config={"tnorm.name": "\x1b]0;T\x07\n| row |", "tnorm.\x1b[2K": 1})
@example(fields={"git_commit": "\x1b]0;T\x07\n# heading"}, config={"\x1b]0;T\x07": 1})
@example(fields={"overrides": ["row=f1", "data={cache_dir:../../../../elsewhere}"]}, config={})
@example(fields={"overrides": ["+trainer.default_root_dir=/tmp/x", "~kb=same"]}, config={})
@example(fields={"cons_ratio": 10**400}, config={"model.ntn_k": -(10**400)})
@example(fields={"test_accuracy": float("inf")}, config={"augment.degrees": float("nan")})
@example(fields={"profile": "quick"}, config={})
@example(fields={}, config={"kb.scale": "m\u0435an", "data.batch_size": 64.5})
def test_a_hostile_record_gets_a_result_or_one_line_from_every_tool(
    fields, config, tmp_path_factory
):
    import warnings

    from campaign.commit_probe import cells_to_probe, probe_overrides
    from campaign.migrate_records import migrate_folder
    from dfl_bench.lifecycle.file_overrides import PATH_KEYS
    from dfl_bench.lifecycle.records import config_hash
    from dfl_bench.reproduction import harvest
    from dfl_bench.results import render_paper
    from dfl_bench.results.agreement import agreement
    from dfl_bench.results.cells import build_table
    from dfl_bench.results.load import load_records
    from dfl_bench.results.paper import load_paper
    from dfl_bench.untrusted import plain_name

    os.environ["DFL_TEST_SECRET"] = SECRET
    base = tmp_path_factory.mktemp("hostile")
    root = base / "records"
    (root / "formulas").mkdir(parents=True)
    trained = _base_record()  # another seed of its cell, trained at another commit
    trained["git_commit"] = "0" * 40
    (root / "formulas" / f"{trained['config_hash']}.json").write_text(json.dumps(trained))
    record = _spoiled({"seed": trained["seed"] + 1})
    record["config"] = {**record["config"], "seed": trained["seed"] + 1}
    for key, value in config.items():
        _set(record["config"], key, value)
    record = {**record, **fields}
    try:  # at its own place, so that the loader counts it where it is valid
        record["config_hash"] = name = config_hash(record["config"])
    except (TypeError, AttributeError, ValueError, OverflowError):
        name = "0123456789abcdef"
    path = root / "formulas" / f"{name}.json"
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
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        frame = load_records(root)
        outputs += [str(w.message) for w in warned]
        table = build_table(load_paper().tables["formulas"], frame, trained["profile"], REPO)
        outputs += [render_paper.markdown(table, agreement(table)), render_paper.latex(table)]
        cells = cells_to_probe(root)
        outputs.append(json.dumps(cells))
    if not fields and not config:  # the tools above did read a record where it is valid
        assert len(frame) == 2 and len(cells) == 1
    if fields.get("profile") == "quick" or config.get("kb.scale") == "m\u0435an":  # named
        assert len(frame) == 1 and any(str(path) in o for o in outputs)
    outputs.append(frame.to_json())
    assert all(map(plain_name, frame["profile"].dropna()))  # a figure's file is named by it
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
    assert all(map(_printable, outputs)), [t for t in outputs if not _printable(t)]
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
