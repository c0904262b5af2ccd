"""Every experiment (one per paper table, Section 10 and the appendix) composes row by row into
a valid operator set, with one distinct config hash per distinct configuration."""

from __future__ import annotations

import copy
import functools
import itertools
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from hydra.errors import MissingConfigException
from omegaconf import OmegaConf

from dfl_bench.lifecycle.provenance import SOURCES, job_provenance
from dfl_bench.lifecycle.records import NOT_HASHED, config_hash
from dfl_bench.lifecycle.train import resolved_config
from dfl_bench.lifecycle.trainer import build_trainer
from dfl_bench.lifecycle.trainer_values import PASSED, check_trainer
from dfl_bench.operators import KINDS, OperatorSet
from dfl_bench.tasks.mnist.interpretation import kb_names

CONF = Path(__file__).resolve().parents[2] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
# The fast tier composes one experiment per test; the slow tier composes every one.
EACH_EXPERIMENT = [
    e if e == "same_symmetric" else pytest.param(e, marks=pytest.mark.slow) for e in EXPERIMENTS
]
PAPER_TABLES = {
    "same_symmetric": 12,
    "sum9_symmetric": 7,
    "aggregation": 20,
    "tnorms": 7,
    "implications": 13,
    "symmetric_aggregators": 12,
    "sgd_implications": 9,
    "formulas": 6,
    "sigmoidal_s": 8,
    "sigmoidal_b0": 7,
    "best": 2,
    "baseline": 2,
}


def compose_job(overrides: list[str], hydra: bool = False):
    """The composed config of one job (`hydra=True` keeps the hydra node)."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=hydra)


def sweep_configs(experiment: str) -> list[dict]:
    """The resolved config of every job `+experiment=NAME -m` launches (the sweeper's product),
    a copy of the one composition all tests share."""
    return copy.deepcopy(_sweep_configs(experiment))


@functools.cache
def _sweep_configs(experiment: str) -> list[dict]:
    """Composes once; value sweeps (row, implication.s) set on a copy, group sweeps recompose."""
    base = compose_job([f"+experiment={experiment}"], hydra=True)
    params = base.hydra.sweeper.params or {}
    axes = [[(key, value) for value in str(values).split(",")] for key, values in params.items()]
    groups = set(base.hydra.runtime.choices)
    configs = []
    for job in itertools.product(*axes):
        cfg = base
        group_overrides = [f"{k}={v}" for k, v in job if k in groups]
        if group_overrides:
            cfg = compose_job([f"+experiment={experiment}", *group_overrides])
        cfg = cfg.copy()
        for key, value in job:
            if key not in groups:
                OmegaConf.update(cfg, key, yaml.safe_load(value))
        configs.append(resolved(cfg))
    return configs


def resolved(cfg) -> dict:
    """The resolved config as train.py records it (without the rows table and hydra node)."""
    return resolved_config(OmegaConf.masked_copy(cfg, [key for key in cfg if key != "hydra"]))


def test_every_paper_table_has_an_experiment():
    assert set(PAPER_TABLES) <= set(EXPERIMENTS)


@pytest.mark.parametrize("experiment", EACH_EXPERIMENT)
def test_experiment_rows_compose_to_valid_operators(experiment):
    jobs = sweep_configs(experiment)
    if experiment in PAPER_TABLES:
        assert len(jobs) == PAPER_TABLES[experiment]
    hashes = set()
    for config in jobs:
        assert config["experiment_name"] == experiment
        OperatorSet.from_config({kind: config[kind] for kind in KINDS})
        hashes.add(config_hash(config))
    assert len(hashes) == len(jobs), "two rows of one table give the same configuration"


def test_default_config_is_section_10_2_fixed_operators():
    config = resolved(compose_job([]))
    assert config["tnorm"] == {"name": "yager", "p": 1.5, "eps": 0.0}
    assert config["tconorm"] == {"name": "yager", "p": 1.5, "eps": 0.0}
    assert config["forall"]["name"] == "log_product"
    assert config["exists"] == {"name": "generalized_mean", "p": 1.5}
    implication = config["implication"]
    assert (implication["name"], implication["base"]) == ("sigmoidal", "reichenbach")
    assert (implication["s"], implication["b0"]) == (9.0, -0.5)
    assert (config["kb"]["name"], config["profile"]["name"]) == ("same", "quick")


def test_recommended_parameters_do_not_leak_into_other_operators():
    config = resolved(compose_job(["tnorm=product", "implication=reichenbach"]))
    assert config["tnorm"] == {"name": "product"}
    assert config["implication"] == {"name": "reichenbach"}
    assert resolved(compose_job(["tnorm.p=3"]))["tnorm"] == {"name": "yager", "p": 3, "eps": 0.0}


def test_symmetric_rows_take_the_t_norm_family():
    config = resolved(compose_job(["+experiment=same_symmetric", "row=product_R"]))
    assert config["tnorm"] == {"name": "product"} and config["implication"] == {"name": "goguen"}
    assert config["kb"]["w_dfl"] == 10.0
    config = resolved(compose_job(["+experiment=same_symmetric", "row=yager_p20_S"]))
    assert config["forall"] == {"name": "yager", "p": 20.0, "eps": 0.0}  # the option's eps
    assert config["kb"]["w_dfl"] == 1.0


YAGER_KINDS = ("tnorm", "tconorm", "implication", "forall", "exists")


SUM9_TY20 = "kb=sum9 kb.w_dfl=1 implication=yager_s forall=yager exists=yager " + " ".join(
    f"{kind}.p=20" for kind in YAGER_KINDS
)


@pytest.mark.parametrize(
    ("experiment", "row", "command", "kinds"),
    [
        ("sum9_symmetric", "yager_p20", SUM9_TY20, YAGER_KINDS),
        (
            "implications",
            "yager_r_p20",
            "kb=same kb.w_dfl=10 optimizer=adam implication=yager_r implication.p=20",
            ("implication",),
        ),
    ],
)
def test_the_yager_eps_runs_a_row_with_the_authors_operators(experiment, row, command, kinds):
    """docs/fidelity.md's commands: the row without +experiment is the row's configuration (one
    hash), and eps=1e-6 in its Yager operators is another."""
    cell = resolved(compose_job([f"+experiment={experiment}", f"row={row}"]))
    plain = command.split()
    assert config_hash(resolved(compose_job(plain))) == config_hash(cell)
    code = resolved(compose_job(plain + [f"{kind}.eps=1e-6" for kind in kinds]))
    assert all(code[kind]["eps"] == 1e-6 for kind in kinds)
    assert config_hash(code) != config_hash(cell)


def test_unknown_operator_option_lists_the_valid_choices():
    with pytest.raises(MissingConfigException, match="lukasiewicz"):
        compose_job(["tnorm=nope"])


def test_hash_ignores_logging_and_paths_but_not_operators():
    base = resolved(compose_job([]))
    same = resolved(compose_job(["logger=csv", "records_dir=/elsewhere", "force=true"]))
    other = resolved(compose_job(["tnorm.p=2"]))
    assert config_hash(base) == config_hash(same)
    assert config_hash(base) != config_hash(other)
    assert {"logger", "records_dir", "force"} <= set(NOT_HASHED)


def job(experiment: str, *overrides: str) -> dict:
    return resolved(compose_job([f"+experiment={experiment}", *overrides]))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # the fixed configuration of Section 10.2 in Tables aggregation and implications
        (("aggregation", "row=forall_log_product"), ("implications", "row=sigmoidal_reichenbach")),
        # s = 9, b0 = -1/2 in both sigmoidal sweeps
        (("sigmoidal_s", "implication.s=9.0"), ("sigmoidal_b0", "implication.b0=-0.5")),
        # T_Y p = 1.5 with E_GM p = 1.5 on sum9 (the authors' code: "computed in t-norm")
        (("tnorms", "row=yager_p1_5"), ("aggregation", "row=exists_gm_p1_5")),
    ],
)
def test_a_configuration_in_two_tables_has_one_hash(first, second):
    a, b = job(*first), job(*second)
    assert (a["experiment_name"], a["row"]) != (b["experiment_name"], b["row"])
    assert config_hash(a) == config_hash(b)


def test_the_paper_baseline_is_same_without_the_dfl_loss():
    pair, ce_only = job("baseline"), job("baseline", "row=ce_only")
    assert (pair["row"], pair["kb"]["name"], pair["kb"]["w_dfl"]) == (
        "ce_pair",
        "same",
        0,
    )
    assert ce_only["kb"]["name"] == "ce_only"
    plain = resolved(compose_job(["kb=same", "kb.w_dfl=0"]))
    assert config_hash(pair) == config_hash(plain)


def test_kb_names_match_the_registry():
    """Every conf/kb option names a registered knowledge base: the package's, imported by
    dfl_bench.logic, or the one its `_target_` names (importing it registers it, as a job
    does), and every registered one has its option."""
    from dfl_bench.logic.kb_registry import from_target

    options = {p.stem: yaml.safe_load(p.read_text()) for p in (CONF / "kb").glob("*.yaml")}
    for option in options.values():
        if "_target_" in option:
            from_target(option["_target_"], option["name"])
    assert set(kb_names()) <= set(options)
    assert all(o["name"] in kb_names() for o in options.values())
    assert all(o["scope"] == "family" for o in options.values())


def test_scope_is_a_command_line_choice():
    family = job("same_symmetric", "row=godel_S")
    formula = job("same_symmetric", "row=godel_S", "kb.scope=formula")
    assert (family["kb"]["scope"], formula["kb"]["scope"]) == (
        "family",
        "formula",
    )
    assert config_hash(family) != config_hash(formula)


@pytest.mark.parametrize(
    ("experiment", "rows"),
    [
        ("sigmoidal_s", [f"s={s}" for s in (1.0, 2.5, 5.0, 7.5, 9.0, 12.5, 15.0, 20.0)]),
        ("sigmoidal_b0", [f"b0={b}" for b in (-1.0, -0.8, -0.65, -0.5, -0.35, -0.2, 0.0)]),
        ("best", ["sum9", "both"]),
    ],
)
def test_value_sweeps_name_their_cell(experiment, rows):
    assert [config["row"] for config in sweep_configs(experiment)] == rows


@pytest.mark.parametrize("experiment", EACH_EXPERIMENT)
def test_every_job_carries_checked_provenance(experiment):
    for config in sweep_configs(experiment):
        assert "row_provenance" not in config
        for entry in config["provenance"].values():
            assert entry["source"] in SOURCES and entry["note"]


@pytest.mark.parametrize(
    ("experiment", "override", "key", "source"),
    [
        ("tnorms", "row=godel", "kb.w_dfl", "authors' code"),
        ("implications", "row=yager_r_p20", "implication.p", "authors' code"),
        ("implications", "row=godel", "kb.w_dfl", "authors' code"),
        ("aggregation", "row=exists_gm_p2", "exists.p", "our choice"),
        ("aggregation", "row=exists_gm_p20", "exists.p", "authors' code"),
        ("aggregation", "row=forall_yager_p20", "forall.p", "paper"),
        ("same_symmetric", "row=godel_S", "kb.scope", "authors' code"),
        ("best", "kb=both", "kb.w_dfl", "our choice"),
        ("sigmoidal_s", "implication.s=2.5", "implication.s", "authors' code"),
    ],
)
def test_values_the_paper_does_not_print_say_where_they_come_from(
    experiment, override, key, source
):
    assert job(experiment, override)["provenance"][key]["source"] == source


def test_row_provenance_updates_the_experiment_entries():
    assert "exists.p" not in job("aggregation", "row=exists_maximum")["provenance"]
    assert "kb.w_dfl" not in job("aggregation", "row=forall_minimum")["provenance"]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"nope.key": {"source": "paper", "note": "n"}}, "not a key"),
        ({"seed": {"source": "folklore", "note": "n"}}, "valid choices"),
        ({"seed": {"source": "paper"}}, "needs a note"),
    ],
)
def test_bad_provenance_raises(entries, message):
    with pytest.raises(ValueError, match=message):
        job_provenance(entries, None, None, {"seed": 0})


def test_trainer_options_pass_through():
    cfg = compose_job(["trainer.precision=bf16-mixed", "profile=smoke"])
    trainer = build_trainer(cfg, [])
    assert (trainer.precision, trainer.max_steps) == ("bf16-mixed", cfg.profile.max_steps)


NOT_PASSED = r" is not passed to the Trainer: .*'precision'"  # naming what the job passes
OWN_UPDATE = r"=.*\(manual optimization\)"  # Lightning's own update, which the step replaces
DELETED = r" is required: conf/trainer sets it .*; set a value instead"  # Lightning's default
NOT_TRAINED = r"=.* is not trained as named on accelerator 'cpu' .*\['32-true', 'bf16-mixed'\]"


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ("+trainer.max_steps=3", " is set by the job"),
        ("+trainer.overfit_batches=1", NOT_PASSED),  # never reaches the job's training stream
        ("+trainer.limit_test_batches=0", NOT_PASSED),  # nor its test pass
        ("+trainer.detect_anomaly=true", NOT_PASSED),  # the same numbers under another hash
        ("+trainer.benchmark=true", NOT_PASSED),
        ("+trainer.strategy={a:1}", NOT_PASSED),
        ("+trainer.accumulate_grad_batches=1", NOT_PASSED),
        ("+trainer.accumulate_grad_batches=1000", OWN_UPDATE),  # a traceback at the first step
        ("+trainer.gradient_clip_val=0.5", OWN_UPDATE),  # never applied
        ("+trainer.gradient_clip_val=nan", OWN_UPDATE),
        ("+trainer.gradient_clip_algorithm=value", OWN_UPDATE),
        *((f"~trainer.{key}", DELETED) for key in PASSED),  # another hash, the same numbers
        ("trainer.devices=1.0", r"=1.0: a job trains on one device \(the integer 1\)"),
        ("trainer.precision=16-mixed", NOT_TRAINED),  # Lightning trains bf16-mixed on the CPU
        *(
            (f"trainer.precision={p}", NOT_TRAINED)  # weights cast, float32 batches: a traceback
            for p in ("16-true", "bf16-true", "64-true", "transformer-engine")
        ),
    ],
)
def test_a_trainer_argument_the_job_does_not_take_is_refused_in_one_line_naming_it(override, said):
    key = override.split("=")[0].lstrip("+~")
    with pytest.raises(ValueError, match=rf"^{key}{said}"):
        check_trainer(compose_job([override, "profile=smoke"]).trainer)


@pytest.mark.parametrize("experiment", EACH_EXPERIMENT)
def test_a_named_row_sweep_runs_every_row_once(experiment):
    cfg = compose_job([f"+experiment={experiment}"], hydra=True)
    params = cfg.hydra.sweeper.params
    if cfg.rows:
        assert str(params.row).split(",") == list(cfg.rows)
    else:
        assert "row" not in params  # a value sweep names each cell itself (row = the value)


def test_what_the_hash_skips_the_job_name_skips_too():
    """The job name (override_dirname) leaves out NOT_HASHED's settings, except those that name
    a job (experiment, row); it leaves out some hashed choices too (how and where a job runs)."""
    exclude = set(compose_job([], hydra=True).hydra.job.config.override_dirname.exclude_keys)
    names_a_job = {"experiment_name", "row", "rows", "families"}
    assert set(NOT_HASHED) - names_a_job <= exclude
    hashed = {key for key in exclude if key.split(".")[0] not in NOT_HASHED}
    assert hashed == {"experiment", "trainer", "hydra/launcher", "hydra.launcher.n_jobs"}


def test_symmetric_tables_share_their_families():
    family = {
        experiment: [c["tnorm"] for c in sweep_configs(experiment)]
        for experiment in ("same_symmetric", "sum9_symmetric", "tnorms")
    }
    assert family["sum9_symmetric"] == family["tnorms"]
    assert set(map(str, family["same_symmetric"])) == set(map(str, family["tnorms"]))


@pytest.mark.parametrize("experiment", EACH_EXPERIMENT)
def test_every_job_names_its_table_cell(experiment):
    rows = [config["row"] for config in sweep_configs(experiment)]
    assert all(isinstance(row, str) and row for row in rows)
    assert len(set(rows)) == len(rows)
