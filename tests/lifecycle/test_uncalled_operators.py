"""An operator no formula of the run's knowledge base calls is not set by an override: a job, a
sweep's jobs, a record and a tool's overrides refuse one (guards.uncalled_refusal), since every
value of it trains the same numbers under another hash; an experiment's yaml that sets it (an
operator family) passes. The operator kinds each formula calls are walked from its tree
(logic.formulas.connectives), which the table read without torch (kb_formulas.CONNECTIVES)
holds."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import pytest
import warm_cli
from jobs import composed, refused_on_cli, smoke_overrides

from dfl_bench.kb_formulas import CALLED_BY, CONNECTIVES, FORMULAS
from dfl_bench.kinds import KINDS
from dfl_bench.lifecycle import records, train
from dfl_bench.lifecycle.override_gate import setting_refusal
from dfl_bench.logic import KBS, AndOver, Forall, Index, Not, OrOver, Predicate, Var
from dfl_bench.logic.formulas import CALLS, connectives

REPO = Path(__file__).resolve().parents[2]
SYMMETRIC = REPO / "results/records/same_symmetric"  # kb=same, each row's operator family
KEEP = "(another value trains the same numbers under another hash)"


def checked(tmp: Path, *overrides: str) -> str:
    """The config hash of the job of `overrides`, checked as it is before it trains."""
    built = train.checked(composed(tmp, *overrides)[0], overrides)
    return records.config_hash(built.config)


def test_each_formulas_connectives_are_walked_from_its_tree():
    calls = {f.name: connectives(f.formula) for spec in KBS.values() for f in spec.families}
    assert {name: calls[name] for name in CONNECTIVES} == CONNECTIVES
    assert set(FORMULAS["both"]) == set(CONNECTIVES)
    same = set().union(*(calls[name] for name in FORMULAS["same"]))
    assert same == {"forall", "tnorm", "implication"}
    assert calls["same/3"] == {"forall", "implication"}  # same(x, y) >> same(y, x)
    assert calls["sum9/1"] == {"forall", "exists"}
    assert set(CALLS.values()) == set(KINDS) == set(CALLED_BY)


def test_a_negation_and_a_fold_over_one_constant_call_no_operator_kind():
    x, one, p = Var("x"), Index("i", 1), Predicate("p", 1, columns=("a",))
    assert connectives(Forall((x,), ~p[0](x))) == {"forall"}
    assert connectives(Forall((x,), OrOver(one, p[one](x)))) == {"forall"}
    assert connectives(Forall((x,), AndOver(Index("j", 2), Not(p[0](x))))) == {"forall", "tnorm"}


SAME = "no formula of same/1, same/2, same/3 has"
REFUSED = [
    (("tconorm=godel",), f"tconorm=godel is refused: kb=same reads no tconorm: {SAME} a "
     "disjunction (| or OrOver): leave tconorm as composed"),
    (("exists=maximum",), f"exists=maximum is refused: kb=same reads no exists: {SAME} an "
     "existential quantifier (Exists): leave exists as composed"),
    (("tconorm.p=3",), "tconorm.p=3 is refused: kb=same reads no tconorm"),
    (("++tconorm={name:godel}",), "++tconorm={name:godel} is refused: kb=same reads no tconorm"),
    (("kb=sum9", "kb.formulas=[2]", "exists=maximum"), "exists=maximum is refused: kb=sum9 "
     "kb.formulas=[2] reads no exists: no formula of sum9/2 has an existential quantifier"),
    (("kb=same", "kb.formulas=[3]", "tnorm=product"), "tnorm=product is refused: kb=same "
     "kb.formulas=[3] reads no tnorm: no formula of same/3 has a conjunction (& or AndOver)"),
    (("kb=sum9", "kb.formulas=[1]", "implication=godel"), "implication=godel is refused: "
     "kb=sum9 kb.formulas=[1] reads no implication: no formula of sum9/1 has an implication"),
]  # fmt: skip


@pytest.mark.parametrize(("overrides", "message"), REFUSED)
def test_an_operator_no_formula_calls_is_refused_in_a_job(tmp_path, overrides, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}") as refused:
        checked(tmp_path, *overrides)
    assert str(refused.value).endswith(KEEP) and "\n" not in str(refused.value)


def test_an_operator_a_formula_calls_or_a_yaml_sets_passes(tmp_path):
    checked(tmp_path, "kb=sum9", "tconorm=godel")  # sum9/2's OrOver
    checked(tmp_path, "kb=both", "exists=maximum")  # sum9/1's Exists
    checked(tmp_path, "kb=sum9", "kb.formulas=[2]", "tnorm=product")
    checked(tmp_path, "tnorm=product", "forall=minimum", "implication=godel")
    checked(tmp_path, "+experiment=same_symmetric", "row=godel_S")  # its family's tconorm, exists


def test_an_operator_no_formula_calls_is_refused_on_the_command_line(tmp_path):
    stderr = refused_on_cli(tmp_path, "tconorm=godel")
    assert stderr.startswith(
        "[dfl_bench] invalid configuration: tconorm=godel is refused: kb=same reads no tconorm"
    )
    assert stderr.count("\n") == 1


def test_a_sweep_of_an_operator_no_formula_calls_trains_no_job(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled"}
    args = [*smoke_overrides(tmp_path), f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    done = warm_cli.run(["-m", *args, "tconorm=godel,product"], tmp_path, env, timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "[dfl_bench] invalid configuration: 2 of 2 sweep jobs, so none was run" in done.stderr
    assert "tconorm=product is refused: kb=same reads no tconorm" in done.stderr
    assert not (tmp_path / "records").exists()


def committed() -> dict:
    """A committed record of kb=same whose config holds its row's operator family."""
    path = next(p for p in sorted(SYMMETRIC.glob("*.json")) if "godel" in p.read_text())
    return json.loads(path.read_text())


def test_a_record_whose_override_sets_an_operator_no_formula_calls_is_no_record():
    record = committed()
    assert record["config"]["kb"]["name"] == "same" and records.invalid(record) is None
    spoiled = copy.deepcopy(record)
    spoiled["overrides"] = [*record["overrides"], "exists.p=2"]
    assert records.invalid(spoiled) == (
        f"exists.p=2 is refused: kb=same reads no exists: {SAME} an existential quantifier "
        f"(Exists): leave exists as composed {KEEP}"
    )


def test_a_tools_override_of_an_operator_no_formula_calls_is_refused():
    config = committed()["config"]
    assert setting_refusal(None, None, ["tconorm=godel"], config).startswith(
        "tconorm=godel is refused: kb=same reads no tconorm"
    )
    assert setting_refusal(None, None, ["tnorm=godel"], config) is None


RECOMMENDED = "is the paper's parameters for the chosen tnorm (conf/recommended/, chosen with it)"


@pytest.mark.parametrize(
    ("override", "composes"),
    [("~recommended/tnorm", True), ("recommended/tnorm=yager", True),
     ("recommended/tnorm=null", False), ("+recommended/tnorm=yager", False)],
)  # fmt: skip
def test_an_override_of_a_recommended_group_is_refused(tmp_path, override, composes):
    """`~recommended/tnorm` set tnorm.p under sum9/1, which calls no tnorm; a
    job, a record's check and a tool refuse each spelling (a job, where Hydra composes it)."""
    if composes:
        with pytest.raises(ValueError, match=f"^{re.escape(override)} is refused: recommended/"):
            checked(tmp_path, "kb=sum9", "kb.formulas=[1]", override)
    record = committed()
    record["overrides"] = [*record["overrides"], override]
    assert RECOMMENDED in (records.invalid(record) or "")
    assert RECOMMENDED in (setting_refusal(None, None, [override], record["config"]) or "")


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ("recommended/tnorm=null", f"recommended/tnorm=null is refused: recommended/tnorm "
         f"{RECOMMENDED}: set tnorm=<option> or tnorm.<key>=<value> instead"),
        ("tnorm=null", "tnorm=null: tnorm is a config group: give one of its options; valid "
         "choices: ['aczel_alsina', "),
    ],
)  # fmt: skip
def test_a_null_config_group_is_one_line_on_the_command_line(tmp_path, override, said):
    """Hydra's defaults list raised a ValueError traceback (exit 1) for it."""
    stderr = refused_on_cli(tmp_path, override)
    assert stderr.startswith(f"[dfl_bench] invalid configuration: {said}")
    assert stderr.count("\n") == 1
