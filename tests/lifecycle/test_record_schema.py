"""A record's fields that the tools read (record_fields.FIELDS): each of the kind a job writes and
would accept, every text in it (keys too, at any depth) a printable line, or the record is no
run record, named in one line with its key. Committed records all pass."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from jobs import CPU_TRAINER
from omegaconf import OmegaConf

from dfl_bench.lifecycle import records
from dfl_bench.reproduction import harvest
from dfl_bench.tasks.values import TASKS

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted(REPO.glob("results/**/records/*/*.json"))
GROUP_KEYS = {  # the keys of the groups a record's config is held to by the job's checks
    "kb": ("scale", "scope"),
    "model": ("ntn_k", "ntn_bias"),
    "augment": ("degrees", "shift"),
    "data": ("labeled_fraction", "batch_size", "eval_batch_size", "subset_train", "validation"),
}


def _record() -> dict:
    return json.loads((REPO / "results/records/formulas/00e405d5662423dd.json").read_text())


def _spoiled(dotted: str, value) -> dict:
    record = copy.deepcopy(_record())
    *parents, key = dotted.split(".")
    node = record
    for name in parents:
        node = node.setdefault(name, {})
    node[key] = value
    return record


@pytest.mark.parametrize(
    ("dotted", "value", "why"),
    [
        ("git_commit", ["a", "b"], r"git_commit \['a', 'b'\] is no git commit id"),
        ("git_commit", {"x": 1}, r"git_commit \{'x': 1\} is no git commit id"),
        ("git_commit", "../../x", "git_commit '../../x' is no git commit id"),
        ("git_commit", "\x1b]0;T\x07", r"its 'git_commit' is no printable line"),
        ("reason", "a\n| row |", r"its 'reason' is no printable line"),
        ("reason", "a" * 2001, "reason 'aaa.* is no text of <= 2000"),
        ("finished", {"a": 1}, r"finished \{'a': 1\} is no time"),
        ("started", 5, "started 5 is no time"),
        ("reused_from", ["x"], r"reused_from \['x'\] is no record's place"),
        ("reused_from", "../../x.json", "reused_from '../../x.json' is no record's place"),
        ("overrides", "row=f1", "overrides 'row=f1' is no list of texts"),
        ("profile", "p" * 101, "profile 'ppp.* is no plain name"),
        ("profile", "quick", "profile 'quick' is not its config's 'long'"),
        ("row", "r" * 101, "row 'rrr.* is no plain name"),
        ("experiment", "e" * 101, "experiment 'eee.* is no experiment's name"),
        ("seed", 2**63, "seed 9223372036854775808 is not a seed"),
        ("config.optimizer.lr", "abc", "config.optimizer.lr must be a finite number > 0"),
        ("config.optimizer.lr", float("nan"), "config.optimizer.lr must be a finite number"),
        ("config.kb.w_dfl", True, "config.kb.w_dfl must be a finite number >= 0"),
        ("config.tnorm.name", 5, "config.tnorm.name 5 is no plain name"),
        ("config.tnorm.p", [1], r"config.tnorm.p \[1\] is no number, text or true/false"),
        ("config.kb.name", ["same"], r"config.kb.name \['same'\] is no plain name"),
        ("config.profile.name", "p" * 101, "config.profile.name 'ppp.* is no plain name"),
        ("config.profile.max_steps", "x", "config.profile.max_steps must be an integer >= 1"),
        ("config.task.name", "../x", "config.task.name '../x' is no plain name"),
        ("config.threads", 0, r"config.threads must be an integer in \[1, 1024\], got 0"),
        ("config.model.ntn_k", 10**20, r"config.model.ntn_k must be an integer in \[1, 1024\]"),
        ("config.net.width", 1025, r"net.width must be an integer in \[1, 1024\]"),
        ("config.data.batch_size", 0, r"config.data.batch_size must be an integer in \[1, 60000"),
        ("config.experiment_name", "a/b", "config.experiment_name 'a/b' is no plain name"),
        ("config.\x1b]0;T\x07", 1, r"its 'config.\\x1b]0;T\\x07' is no printable line"),
        ("config.provenance.kb.\x1b[1A", {}, r"its 'config.provenance.kb.\\x1b\[1A' is no"),
        ("config.tnorm.name", "yager\n| row |", r"its 'config.tnorm.name' is no printable"),
    ],
)
def test_a_field_of_another_kind_makes_no_run_record_and_names_its_key(dotted, value, why):
    record = _spoiled(dotted, value)
    if dotted == "seed":
        record["config"]["seed"] = value
    found = records.invalid(record)
    assert found is not None and "\n" not in found and found.isprintable()
    assert re.match(why, found), found


HOSTILE = {  # an override setting no config value (file_overrides.unsettable) -> why, or a path's
    "hydra.sweep.dir=../../x": "a Hydra setting",
    "+hydra.searchpath=[file:///tmp/evil]": "a Hydra setting",
    "hydra.job.chdir=true": "a Hydra setting",
    "+x=${oc.env:SECRET}": "an interpolation",
    "-m": "not a plain key=value",
    "checkpoint_dir=..\\..\\etc": None,
    "checkpoint_dir=\uff0e\uff0e/etc": None,
}


@pytest.mark.parametrize(("override", "why"), HOSTILE.items())
def test_a_record_whose_override_sets_no_config_value_is_no_run_record(override, why):
    """A record's overrides set config values (file_overrides.unsettable), its paths inside
    their folders: `..` spelled with `\\` or full-width dots is `..`."""
    record = _record()
    record["overrides"].append(override)
    found = records.invalid(record)
    assert found is not None and found.startswith(f"overrides {override!r}"), found
    assert f"sets no config value ({why}" in found if why else "leaves its folder" in found


@pytest.mark.parametrize(
    ("dotted", "value", "why"),
    [
        ("stack", ["../../x"], r"stack \['../../x'\] is no stack \(.*<experiment>/<16-hex"),
        ("stack", ["formulas/00e405d5662423dz"], "stack .* is no stack"),
        ("config.experiment_name", "tnorms", "experiment 'formulas' is not its config's exp"),
    ],
)
def test_a_record_naming_no_jobs_stack_or_another_experiment_is_no_run_record(dotted, value, why):
    found = records.invalid(_spoiled(dotted, value))
    assert found is not None and re.match(why, found), found


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("config.seed", 2**63),
        ("config.optimizer.lr", "abc"),
        ("config.tnorm.name", 5),
        ("config.kb.name", ["same"]),
        ("config.tnorm.\x1b[2K", 1),
        ("git_commit", {"x": 1}),
        ("config.kb.scale", "m\u0435an"),
        ("config.model.ntn_k", -5),
        ("config.data.labeled_fraction", "abc"),
        ("config.data.batch_size", -1),
        ("config.data.batch_size", 64.5),
        ("config.augment.degrees", "false"),
        ("config.model", 5),
        ("config.tnorm.p", -3.0),
        ("config.tnorm.name", "nosuch"),
        ("config.implication.p", -1.0),
        ("config.forall.eps", -1.0),
        ("config.task.digits", 99999),
        ("config.profile.checkpoint_every", -5),
        ("config.profile.subset_train", 1),
        ("config.optimizer.fused", 1),
        ("config.optimizer.eps", 1e-08),
        ("config.optimizer.name", "adam"),  # with SGD's momentum
        ("config.trainer.deterministic", 1),
        ("config.trainer.devices", 8),
        ("config.optimizer.cosine_final", 2.0),
        ("config.optimizer.warmup", -1),
        ("config.optimizer.warmup", 10**6),  # longer than the run
        ("config.optimizer.betas", [0.9, 1.5]),
        ("config.trainer.precision", "zzz"),
        ("config.trainer.accelerator", "tpu9"),
        ("config.trainer.zzz", 1),
        ("config.trainer.accumulate_grad_batches", 4),
        ("config.trainer.gradient_clip_val", 1.0),
        ("config.trainer.max_steps", 10),
        ("config.trainer.overfit_batches", 1),
        ("config.trainer.detect_anomaly", True),
        ("config.kb.formulas", ["nosuch"]),
        ("config.kb.weights", [-1.0]),
        ("config.kb.formulas", ["same/1", "same/3"]),  # [1, 3]'s other spelling
        ("config.kb.weights", {"same/3": 2.0}),  # {3: 2.0}'s
        ("config.kb.weights", {"1": 2.0, "3": 2.0}),  # its formulas [1, 3]: kb.w_dfl times 2
        *((f"config.{key}.zzz", 1) for key in ("tnorm", "task", "kb", "net", "optimizer")),
        ("config.zzz", 1),
    ],
)
def test_the_harvest_takes_no_record_whose_job_would_refuse_its_values(dotted, value, tmp_path):
    record = _spoiled(dotted, value)
    record["seed"] = record["config"]["seed"]
    record["config_hash"] = records.config_hash(record["config"])
    source = tmp_path / "background" / "formulas"
    source.mkdir(parents=True)
    (source / f"{record['config_hash']}.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match="nothing was harvested: .*not a whole run record"):
        harvest.harvest(tmp_path / "background", tmp_path / "dest", "results/records")
    assert not (tmp_path / "dest").exists()


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("p_conv", 1.5, r"net.p_conv must be a fraction in \[0, 1\), got 1.5"),
        ("p_fc", -0.5, r"net.p_fc must be a fraction in \[0, 1\), got -0.5"),
        ("width", 0, r"net.width must be an integer in \[1, 1024\], got 0"),
    ],
)
def test_a_networks_setting_the_job_refuses_makes_no_run_record(key, value, why):
    path = REPO / "results/records/mnist_addition_collapse_nets/7d80fc32cf14a29d.json"
    record = json.loads(path.read_text())
    assert records.invalid(record) is None
    record["config"]["net"][key] = value
    assert re.fullmatch(why, records.invalid(record) or "")


def test_an_addition_record_whose_data_sets_a_setting_of_its_task_is_no_run_record():
    """The job refuses `+data.validation=0.2` under mnist_addition (its data take
    task.validation); a record holding it is no run either."""
    record = json.loads((REPO / "results/records/mnist_addition/002eb9d089581073.json").read_text())
    assert records.invalid(record) is None
    record["config"]["data"]["validation"] = 0.2
    assert records.invalid(record) == (
        "data.validation=0.2 is not read by task 'mnist_addition': its data take task.validation "
        "(set task.validation=0.2 instead)"
    )


def test_a_record_naming_its_seeds_own_split_is_no_run_record():
    """`data.split_seed` null is the seed's split: a record naming it holds that run under
    another hash, as a job refuses it (values.check_split_seed); another split is a run."""
    record = json.loads((REPO / "results/records/baseline/00ef509e0a018ab9.json").read_text())
    assert record["config"]["data"]["split_seed"] is None and records.invalid(record) is None
    seed = record["config"]["seed"]
    record["config"]["data"]["split_seed"] = seed
    assert records.invalid(record) == f"data.split_seed={seed} is the seed's split: leave it null"
    record["config"]["data"]["split_seed"] = seed + 1
    assert records.invalid(record) is None


@pytest.mark.parametrize(("key", "value"), [("split_seed", 7), ("labeled_fraction", 0.5)])
def test_an_addition_record_claiming_a_data_setting_its_task_does_not_apply_is_no_run(key, value):
    """mnist_addition's data apply neither key: such a run trained the composed value's numbers
    (and split_seed, set aside in a cell's hash, made it a second run of its cell and seed)."""
    record = json.loads((REPO / "results/records/mnist_addition/002eb9d089581073.json").read_text())
    composed = OmegaConf.load(REPO / "conf/config.yaml").data[key]
    assert record["config"]["data"][key] == composed == TASKS["mnist_addition"].unread[key][0]
    assert records.invalid(record) is None
    record["config"]["data"][key] = value
    assert re.fullmatch(
        rf"data.{key}={value} is not read by task 'mnist_addition' \(.*\): leave data.{key} .*",
        records.invalid(record) or "",
    )


def test_a_record_of_another_profile_than_its_configs_is_named_by_the_renderer(tmp_path):
    import warnings

    from dfl_bench.results.load import RecordWarning, load_records

    record = _spoiled("profile", "quick")
    path = tmp_path / "formulas" / "00e405d5662423dd.json"
    path.parent.mkdir()
    path.write_text(json.dumps(record))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecordWarning)
        assert load_records(tmp_path).empty
    said = [str(w.message) for w in caught]
    assert any(str(path) in m and "profile 'quick' is not its config's 'long'" in m for m in said)


GROUP_VALUES = (
    st.none()
    | st.booleans()
    | st.integers(-3, 70_000)
    | st.floats(-1, 100)
    | st.text(max_size=5)
    | st.sampled_from(["mean", "m\u0435an", "sum", "family", "formula", "auto", "idx", "false"])
)


@settings(max_examples=60, deadline=None)
@given(
    key=st.sampled_from([f"{group}.{key}" for group, keys in GROUP_KEYS.items() for key in keys]),
    value=GROUP_VALUES,
)
def test_a_records_config_is_refused_where_the_job_refuses_it(key, value):
    """The job's own check of its task (what it runs before any data is loaded) and the record
    check agree on every value of the groups a record's config is held to (tasks/values.py)."""
    from dfl_bench import tasks

    record = _spoiled(f"config.{key}", value)
    try:
        tasks.task_of(record["config"]).check(record["config"])
    except ValueError:
        job_refuses = True
    else:
        job_refuses = False
    assert (records.invalid(record) is not None) == job_refuses, records.invalid(record)


JOB_KEYS = (
    *(f"{kind}.{key}" for kind in ("tnorm", "implication", "forall") for key in ("p", "eps")),
    *(f"{kind}.{key}" for kind in ("tnorm", "exists") for key in ("name", "zzz")),
    *(f"task.{key}" for key in ("name", "digits", "validation", "zzz")),
    *(f"profile.{key}" for key in ("checkpoint_every", "subset_train", "subset_test", "zzz")),
    *(f"optimizer.{key}" for key in ("name", "fused", "eps", "lr", "warmup", "cosine_final")),
    *(f"trainer.{key}" for key in ("deterministic", "devices", "precision", "accelerator")),
    *(f"trainer.{key}" for key in ("zzz", "max_steps", "accumulate_grad_batches",
                                   "gradient_clip_val", "logger", "benchmark")),
    *(f"net.{key}" for key in ("p_conv", "p_fc", "width", "width2", "embedding")),
    "net.zzz", "kb.zzz", "zzz",
)  # fmt: skip
JOB_VALUES = (
    st.none()
    | st.booleans()
    | st.integers(-3, 200)
    | st.floats(-2, 5)
    | st.text(max_size=3)
    | st.sampled_from(["yager", "mae", "sgd", "adam", "mnist_addition", "nosuch"])
    | st.sampled_from(["cpu", "gpu", "tpu", "16-mixed", "32", "bf16-true"])
)
KB_VALUES = (  # a knowledge base's formulas and weights: lists and mappings besides
    JOB_VALUES
    | st.lists(st.sampled_from([1, 3, 4, "2", "same/3", "sum9/1", "nosuch"]), max_size=3)
    | st.dictionaries(st.sampled_from([1, "2", "same/3", "x"]), st.floats(-1, 3), max_size=2)
)
BN_DEEP = {"_target_": "dfl_bench.tasks.mnist.nets.BnDeep", "name": "bn_deep", "width": 16,
           "width2": 40, "embedding": 128, "p_conv": 0.1, "p_fc": 0.4}  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    keyed=st.tuples(st.sampled_from(JOB_KEYS), JOB_VALUES)
    | st.tuples(st.sampled_from(["kb.formulas", "kb.weights"]), KB_VALUES)
)
def test_a_records_config_passes_exactly_where_the_job_takes_it(keyed):
    """The job's checks before it trains (guards.check_config, its operators, network and
    knowledge base built, its optimizer's spec) and the record check (read without torch) agree
    on a record's operators, task, budget, optimizer, trainer, network, formulas, kinds and keys
    (lifecycle/record_config.py), on the config as the record check reads it: a record's of an
    older form in today's (migrate_config: `exists=yager` without its later `eps` is one)."""
    from dfl_bench.lifecycle.guards import check_config
    from dfl_bench.lifecycle.migrate import migrate_config, shape_defect
    from dfl_bench.logic import build_kb
    from dfl_bench.operators import KINDS, OperatorSet
    from dfl_bench.tasks.mnist.nets import build_net
    from dfl_bench.tasks.optim import spec

    key, value = keyed
    assume(not key.startswith("profile.") or value is not None)  # a record's null: not given
    record = _spoiled(f"config.{key}", value)
    config = record["config"]
    if key.startswith("net."):  # a network with sizes and dropouts
        config["net"] = {**BN_DEEP, key.removeprefix("net."): value}
    if shape_defect({"config": config}) is None:
        config = migrate_config(config)
    try:
        check_config(config)
        OperatorSet.from_config({kind: config[kind] for kind in KINDS})
        spec(config["optimizer"], config["profile"]["max_steps"])
        build_net(config["net"])
        options = {k: config["kb"].get(k) for k in ("formulas", "weights")}
        build_kb(config["kb"]["name"], **options)
    except ValueError:
        job_refuses = True
    else:
        job_refuses = False
    assert (records.invalid(record) is not None) == job_refuses, records.invalid(record)


def test_the_precisions_a_job_takes_are_lightnings_and_the_cpu_trains_its_own_as_named():
    from typing import get_args

    import lightning as L
    from lightning.fabric.connector import _PRECISION_INPUT_STR

    from dfl_bench.lifecycle.trainer_values import ON_CPU, PRECISIONS

    assert set(PRECISIONS) <= set(get_args(_PRECISION_INPUT_STR))
    for precision in PRECISIONS:
        trainer = L.Trainer(accelerator="cpu", devices=1, precision=precision, logger=False)
        assert (trainer.precision == precision) == (precision in ON_CPU), precision


@pytest.mark.parametrize(
    ("trainer", "why"),
    [
        (None, "trainer.accelerator is required: conf/trainer sets it"),  # no trainer group
        *(({k: v for k, v in CPU_TRAINER.items() if k != key}, f"trainer.{key} is required: ")
          for key in CPU_TRAINER),
        ({**CPU_TRAINER, "devices": 1.0}, "trainer.devices=1.0: a job trains on one device"),
        ({**CPU_TRAINER, "precision": "16-mixed"}, "trainer.precision='16-mixed' is not trained as "
         "named on accelerator 'cpu' (a job's batches are float32; the CPU trains 16-mixed as "
         "bf16-mixed); valid choices there: ['32-true', 'bf16-mixed']"),
        ({**CPU_TRAINER, "accelerator": "gpu", "precision": "bf16-true"}, "trainer.precision="
         "'bf16-true' is not trained as named on accelerator 'gpu'"),
    ],
)  # fmt: skip
def test_a_record_whose_trainer_a_job_would_not_train_as_named_is_no_run_record(trainer, why):
    record = _record()
    assert record["config"]["trainer"] == CPU_TRAINER and records.invalid(record) is None
    record["config"]["trainer"] = trainer
    if trainer is None:
        del record["config"]["trainer"]
    assert (records.invalid(record) or "").startswith(why)
    gpu = {**CPU_TRAINER, "accelerator": "gpu", "precision": "16-mixed"}  # fp16 AMP on a GPU
    assert records.invalid({**record, "config": {**record["config"], "trainer": gpu}}) is None


def test_the_trainer_arguments_a_job_passes_are_lightnings():
    import inspect

    import lightning as L

    from dfl_bench.lifecycle.trainer_values import ARGUMENTS, OWNED

    assert list(ARGUMENTS) == list(inspect.signature(L.Trainer.__init__).parameters)[1:]
    assert set(OWNED) <= set(ARGUMENTS)


def test_the_formulas_a_record_is_held_to_are_the_registered_knowledge_bases():
    from omegaconf import OmegaConf

    from dfl_bench.kb_formulas import FORMULAS
    from dfl_bench.logic import KBS

    named = {OmegaConf.load(path).name for path in (REPO / "conf" / "kb").glob("*.yaml")}
    package = {name: tuple(f.name for f in KBS[name].families) for name in named if name in KBS}
    assert FORMULAS == package


def test_every_committed_record_is_of_the_declared_kinds():
    assert len(COMMITTED) > 1000
    assert {str(p): records.defect(p) for p in COMMITTED if records.defect(p)} == {}


def test_a_jobs_reason_is_written_as_one_printable_line():
    record = records.make_record(
        status="failed", reason="a\nb\x1b[2K" + "c" * 3000, config={"seed": 0}, summary={}
    )
    assert record["reason"].startswith("a b [2K") and len(record["reason"]) == records.MAX_TEXT
    assert records.unfit(record) is None and next(records.unprintable_keys(record), None) is None


@pytest.mark.parametrize(
    ("path", "group", "key", "full"),
    [
        ("baseline/00ef509e0a018ab9.json", "data", "subset_test", 10_000),
        ("baseline/00ef509e0a018ab9.json", "profile", "subset_train", 60_000),
        ("mnist_addition/002eb9d089581073.json", "data", "subset_test", 10_000),
        ("mnist_addition/002eb9d089581073.json", "data", "subset_train", 60_000),
    ],
)
def test_a_record_whose_subset_is_all_the_images_is_no_run_record(path, group, key, full):
    """A subset of all of MNIST's images is null's run (all of them) under another hash: a
    record holding it is no run, as a job refuses it (values.check_subsets); one fewer is."""
    record = json.loads((REPO / "results/records" / path).read_text())
    assert record["config"][group][key] is None and records.invalid(record) is None
    record["config"][group][key] = full
    which = "training" if key == "subset_train" else "test"
    assert records.invalid(record) == (
        f"{group}.{key}={full} is all of MNIST's {which} images: leave it null"
    )
    record["config"][group][key] = full - 1
    assert records.invalid(record) is None


@pytest.mark.parametrize(
    ("path", "fraction", "why"),
    [
        ("baseline/00ef509e0a018ab9.json", 0.010001, "labels 600 of 60000 images, as 0.01 does"),
        ("baseline/00ef509e0a018ab9.json", 0.0101, None),
        ("baseline/00ef509e0a018ab9.json", 0.99904, "labels 59942 of 60000 images, as 0.99903"),
        # the ceiling search holds out a tenth: its split is drawn from 54000 images
        ("digit_ceiling_search/11dd40f67fab53e7.json", 0.99904, None),
        ("digit_ceiling_search/11dd40f67fab53e7.json", 0.99903, "labels 53948 of 54000 images"),
    ],
)
def test_a_record_whose_labeled_fraction_is_another_spelling_of_its_count_is_no_run(
    path, fraction, why
):
    """A labeled fraction labels max(1, round(fraction * n)) of the n images its split is drawn
    from (the held-out ones aside): another spelling of that count is its one spelling's run
    under another hash, refused as a job refuses it (values.check_labeled)."""
    record = json.loads((REPO / "results/records" / path).read_text())
    assert records.invalid(record) is None
    record["config"]["data"]["labeled_fraction"] = fraction
    found = records.invalid(record)
    if why is None:
        assert found is None
    else:
        assert (found or "").startswith(f"data.labeled_fraction={fraction} {why}"), found
