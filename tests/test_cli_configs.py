"""Every experiment (one per paper table, Section 10 and the appendix) composes row by row into
a valid operator set, with one distinct config hash per distinct configuration."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from hydra.errors import MissingConfigException
from omegaconf import OmegaConf

from dfl_bench.operators import KINDS, OperatorSet
from dfl_bench.records import NOT_HASHED, config_hash

CONF = Path(__file__).resolve().parent.parent / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
PAPER_TABLES = {
    "same_symmetric": 12,
    "sum9_symmetric": 7,
    "aggregation": 20,
    "tnorms": 7,
    "implications": 13,
    "symmetric_aggregators": 12,
    "sgd_implications": 9,
    "formulas": 6,
    "sigmoidal_s": 10,
    "sigmoidal_b0": 7,
    "best": 2,
    "baseline": 1,
}


def compose_job(overrides: list[str], hydra: bool = False):
    """The composed config of one job (`hydra=True` keeps the hydra node)."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=hydra)


def sweep_configs(experiment: str) -> list[dict]:
    """The resolved config of every job `+experiment=NAME -m` launches (the sweeper's product).

    Composes once; value sweeps (row, implication.s) are set on a copy, group sweeps recompose.
    """
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
    job = OmegaConf.masked_copy(cfg, [key for key in cfg if key != "hydra"])
    config = OmegaConf.to_container(job, resolve=True, throw_on_missing=True)
    config.pop("rows", None)
    return config


def test_every_paper_table_has_an_experiment():
    assert set(PAPER_TABLES) <= set(EXPERIMENTS)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
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
    assert config["tnorm"] == {"name": "yager", "p": 1.5}
    assert config["tconorm"] == {"name": "yager", "p": 1.5}
    assert config["forall"]["name"] == "log_product"
    assert config["exists"] == {"name": "generalized_mean", "p": 1.5}
    implication = config["implication"]
    assert (implication["name"], implication["base"]) == ("sigmoidal", "reichenbach")
    assert (implication["s"], implication["b0"]) == (9.0, -0.5)
    assert (config["problem"]["name"], config["profile"]["name"]) == ("same", "quick")


def test_recommended_parameters_do_not_leak_into_other_operators():
    config = resolved(compose_job(["tnorm=product", "implication=reichenbach"]))
    assert config["tnorm"] == {"name": "product"}
    assert config["implication"] == {"name": "reichenbach"}
    assert resolved(compose_job(["tnorm.p=3"]))["tnorm"] == {"name": "yager", "p": 3}


def test_symmetric_rows_take_the_t_norm_family():
    config = resolved(compose_job(["+experiment=same_symmetric", "row=product_R"]))
    assert config["tnorm"] == {"name": "product"} and config["implication"] == {"name": "goguen"}
    assert config["problem"]["w_dfl"] == 10.0
    config = resolved(compose_job(["+experiment=same_symmetric", "row=yager_p20_S"]))
    assert config["forall"] == {"name": "yager", "p": 20.0}
    assert config["problem"]["w_dfl"] == 1.0


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
