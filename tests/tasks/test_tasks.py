"""Tasks (dfl_bench/tasks/): MNIST addition's split, its grounded sum formula against brute force,
and a third task built from this file alone and run through the lifecycle."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import torch
import warm_cli
from jobs import composed

from dfl_bench import tasks
from dfl_bench.lifecycle import train
from dfl_bench.operators import OperatorSet
from dfl_bench.tasks import mnist_addition as addition

OPS = {
    "tconorm": {"name": "product"},
    "implication": {"name": "reichenbach"},
    "forall": {"name": "log_product", "reduction": "mean"},
}


def ops(tnorm: dict, exists: dict) -> OperatorSet:
    return OperatorSet.from_config({**OPS, "tnorm": tnorm, "exists": exists})


def digit_probs(batch: int, width: int, seed: int = 0) -> torch.Tensor:
    logits = torch.randn(batch, width, 10, generator=torch.Generator().manual_seed(seed))
    return logits.double().log_softmax(-1)


@pytest.mark.parametrize("digits", [1, 2])
def test_the_exact_valuation_is_the_probability_of_the_sum(digits):
    log_p = digit_probs(3, 2 * digits)
    sums = torch.tensor([0, 9 * (10**digits - 1) // 9, 2 * (10**digits - 1)])  # 0, middle, max
    sums[1] = 7 if digits == 1 else 123
    exact = addition.sum_valuation(log_p, addition.digits_of(sums, digits),
                                   ops({"name": "product"}, {"name": "bounded_sum"}),
                                   log=True).exp()  # fmt: skip
    p = log_p.exp()
    values = addition.place_values(digits).tolist()
    for b, z in enumerate(sums.tolist()):
        brute = sum(
            math.prod(p[b, i, d].item() for i, d in enumerate(tup))
            for tup in itertools.product(range(10), repeat=2 * digits)
            if sum(d * v for d, v in zip(tup, values, strict=True)) == z
        )
        assert exact[b].item() == pytest.approx(brute, rel=1e-9)
    generic = addition.sum_valuation(
        log_p,
        addition.digits_of(sums, digits),
        ops({"name": "product"}, {"name": "bounded_sum"}),
        log=False,
    )
    torch.testing.assert_close(generic, exact)


def test_goedel_with_the_maximum_is_the_best_matching_tuples_weakest_digit():
    log_p = digit_probs(2, 2)
    sums = addition.digits_of(torch.tensor([5, 18]), 1)
    v = addition.sum_valuation(log_p, sums, ops({"name": "godel"}, {"name": "maximum"}), False)
    p = log_p.exp()
    assert v[0].item() == pytest.approx(max(min(p[0, 0, a], p[0, 1, 5 - a]) for a in range(6)))
    assert v[1].item() == pytest.approx(min(p[1, 0, 9], p[1, 1, 9]).item())


def test_the_split_pairs_every_image_once_and_labels_the_sum():
    groups = addition.paired(60_000, 1, seed=0)
    assert groups.shape == (30_000, 2) and len(np.unique(groups)) == 60_000
    assert addition.paired(60_000, 2, 0).shape == (15_000, 4)
    assert addition.paired(10_000, 1, 1).shape == (5_000, 2)
    labels = np.arange(10).repeat(2)
    sums = addition.group_labels(labels, np.array([[0, 19], [3, 4, 10, 11]][:1]), 1)
    assert sums.tolist() == [[0, 9]]  # 0 + 9, as its digits
    four = addition.group_labels(labels, np.array([[3, 4, 10, 11]]), 2)  # 12 + 55
    assert four.tolist() == [[0, 6, 7]]


def test_bad_task_settings_are_refused_before_training(tmp_path):
    with pytest.raises(ValueError, match=r"task.digits must be an integer in \[1, 100\], got 0"):
        train.checked(composed(tmp_path, "task=mnist_addition", "task.digits=0")[0])
    with pytest.raises(ValueError, match=r"task.digits=3: exists=bounded_sum with tnorm=godel"):
        train.checked(
            composed(tmp_path, "task=mnist_addition", "task.digits=3", "tnorm=godel",
                     "exists=bounded_sum")[0]
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"unknown task 'nope'; valid choices: \['mnist_addition'"):
        train.checked(composed(tmp_path, "task.name=nope")[0])


# A third task written in a temporary folder as one class and one yaml, no other file changed.

TOY_TASK = '''"""A toy task: which of two Gaussian blobs a point is from (a linear classifier)."""

import lightning as L
import torch

from dfl_bench.tasks.contract import Task, TaskRun, stacked


class ToyData(L.LightningDataModule):
    checksum = "toy"
    arrays = None

    def __init__(self, runs):
        super().__init__()
        self.runs = runs

    def batch(self):
        y = torch.arange(64) % 2
        noise = torch.randn(64, 2, generator=torch.Generator().manual_seed(0))
        return noise + torch.stack([4.0 * y - 2.0, torch.zeros(64)], -1), y

    def train_dataloader(self):
        return iter([stacked([self.batch()] * self.runs)] * 1000)

    def test_batches(self, device):
        return [self.batch()]


class ToyRun(TaskRun):
    TERMS = ("ce",)

    def __init__(self, config):
        profile = config["profile"]
        super().__init__(config["seed"], {"name": "sgd", "lr": config["task"]["lr"]},
                         profile["log_every"], 0, profile["max_steps"])
        self.net = torch.nn.Linear(2, 2)
        self.accuracy = None

    def step_loss(self, batch, logging):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        return loss, loss.view(1), None

    def evaluate(self, batches):
        ((x, y),) = batches
        self.accuracy = (self.net(x).argmax(-1) == y).float().mean().item()
        return {"accuracy": self.accuracy}

    def summary(self, optimizer):
        return {"test_accuracy": self.accuracy, "best_test_accuracy": self.accuracy,
                "evaluated_step": self.evaluated_step}


class Toy(Task):
    NAME = "toy"
    IGNORES = ("kb", "model")
    NUMBERS = {"lr": (0.0, 10.0)}

    def build(self, config, operators):
        return ToyRun(config)

    def data(self, configs):
        return ToyData(len(configs))
'''


@pytest.mark.slow
def test_a_task_of_one_class_and_one_yaml_trains_through_the_cli_alone_and_stacked(tmp_path):
    """The seam a researcher extends: `toy_task.py` and `conf/task/toy.yaml` in a folder of
    their own, on PYTHONPATH and Hydra's search path, train through the CLI, alone and as a
    stack of two, and the toy's own setting is read by the toy only."""
    import os
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    (tmp_path / "conf" / "task").mkdir(parents=True)
    (tmp_path / "toy_task.py").write_text(TOY_TASK)
    (tmp_path / "conf" / "task" / "toy.yaml").write_text(
        "_target_: toy_task.Toy\nname: toy\nlr: 0.5\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{repo}", "WANDB_MODE": "disabled"}
    common = [
        "task=toy",
        f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
        *("profile=smoke", "profile.max_steps=30", "profile.log_every=5", "logger=none"),
        *("progress_bar=false", f"checkpoint_dir={tmp_path / 'ckpt'}"),
    ]
    alone = warm_cli.run([*common, f"records_dir={tmp_path / 'alone'}"], tmp_path, env)
    assert alone.returncode == 0, alone.stderr[-3000:]
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "alone").rglob("*.json")]
    assert record["status"] == "ok" and record["steps"] == 30 and record["test_accuracy"] > 0.9
    assert record["config"]["task"] == {"_target_": "toy_task.Toy", "name": "toy", "lr": 0.5}
    stack = [
        *("-m", "seed=0,1", "hydra/launcher=stack", *common),
        *(f"records_dir={tmp_path / 'stack'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"),
    ]
    done = warm_cli.run(stack, tmp_path, env)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = {
        r["seed"]: r
        for r in map(json.loads, map(Path.read_text, (tmp_path / "stack").rglob("*.json")))
    }
    assert sorted(runs) == [0, 1] and all(r["status"] == "ok" for r in runs.values())
    assert runs[0]["test_accuracy"] == record["test_accuracy"]  # seed 0: the run alone
    refused = warm_cli.run([*common, "kb=sum9", f"records_dir={tmp_path / 'x'}"], tmp_path, env)
    assert refused.returncode != 0 and "task 'toy' does not read kb, model" in refused.stderr


@pytest.mark.slow
def test_an_addition_run_in_a_stack_is_the_run_alone(tmp_path):
    """MNIST addition through the one training module: seed 0 stacked with seed 1 logs, learns
    and records what seed 0 alone does, bit for bit (each run's own network on the CPU)."""
    from dfl_bench.lifecycle import records, stack_sweep
    from dfl_bench.lifecycle.job import Job

    short = ("task=mnist_addition", "profile=smoke", "profile.max_steps=6", "profile.eval_every=3")
    alone = train.run(*composed(tmp_path / "alone", *short, "seed=0"))
    jobs = [Job(*composed(tmp_path / "stack", *short, f"seed={seed}")) for seed in (0, 1)]
    stack_sweep.run_sweep(jobs, stack_size=2)
    stacked_0, stacked_1 = (job.record for job in jobs)
    assert alone["status"] == stacked_0["status"] == stacked_1["status"] == "ok"
    fields = (*records.SUMMARY_FIELDS, "digit_accuracy", "sum_accuracy", "gradient_reached")
    assert {k: stacked_0[k] for k in fields} == {k: alone[k] for k in fields}
    assert stacked_0["config_hash"] == alone["config_hash"]
    assert stacked_1["digit_accuracy"] != alone["digit_accuracy"]  # its own seed, not a copy


@pytest.mark.slow
def test_the_addition_multirun_records_sum_and_digit_accuracy_and_renders(tmp_path):
    import os
    from pathlib import Path

    from dfl_bench.results.__main__ import main as render

    repo = Path(__file__).resolve().parents[2]
    records = tmp_path / "records"
    command = [
        *("-m", "+experiment=mnist_addition", "profile=smoke"),
        *("row=product_sum,godel_max", "seed=0,1,2", "logger=none", "progress_bar=false"),
        *(f"records_dir={records}", f"checkpoint_dir={tmp_path / 'ckpt'}"),
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    env = {**os.environ, "PYTHONPATH": str(repo), "WANDB_MODE": "disabled"}
    done = warm_cli.run(command, tmp_path, env)
    assert done.returncode == 0, done.stderr[-3000:]
    found = [json.loads(p.read_text()) for p in records.rglob("*.json")]
    assert len(found) == 6 and all(r["status"] == "ok" for r in found)
    assert all(
        r["sum_accuracy"] == r["test_accuracy"] and 0 <= r["digit_accuracy"] <= 1 for r in found
    )
    assert all(r["gradient_reached"] is True for r in found)
    table = done.stdout[done.stdout.index("[dfl_bench] mnist_addition at profile smoke:") :]
    assert "| product_sum | 3 |" in table and "| godel_max | 3 |" in table  # the sweep's end
    assert "undef." in table and "nan" not in table  # the ratios this task does not define
    assert render([f"--records-dir={records}", "--tables=mnist_addition"]) == 0
    text = (records / "tables" / "mnist_addition.md").read_text()
    assert (
        "| row | n | Accuracy | digit accuracy (final) | sums evaluated: the mean's 95% (binomial) "
        "| digit accuracy^(2N) | wall time (min) | accuracy - product_sum |" in text
    )
    assert "| godel_max [1] | 3 |" in text


@pytest.mark.parametrize(
    ("tnorm", "exists", "trains"),
    [
        ({"name": "lukasiewicz"}, {"name": "bounded_sum"}, False),
        ({"name": "yager", "p": 2.0}, {"name": "yager", "p": 2.0}, False),
        ({"name": "product"}, {"name": "probabilistic_sum"}, True),
        ({"name": "godel"}, {"name": "maximum"}, True),
    ],
)
def test_a_nilpotent_conjunction_of_untrained_digits_passes_no_gradient(tnorm, exists, trains):
    """Untrained digits are near-uniform (every probability far below 1/2): T_LK(a, b) =
    max(0, a + b - 1) and Yager p=2 are 0 there with a zero derivative, so MNIST addition, whose
    only loss is the sum's, cannot start (the runs' records say gradient_reached false)."""
    logits = (0.1 * torch.randn(64, 2, 10, generator=torch.Generator().manual_seed(0))).double()
    logits.requires_grad_(True)
    sums = addition.digits_of(
        torch.randint(0, 19, (64,), generator=torch.Generator().manual_seed(1)), 1
    )
    operators = ops(tnorm, exists)
    exact = addition.in_log(operators)
    valuation = addition.sum_valuation(logits.log_softmax(-1), sums, operators, exact)
    addition.dfl_loss(valuation, operators, exact).backward()
    assert bool((logits.grad != 0).any()) is trains


PAIRS = [  # every factorizing (t-norm, existential) kind: the probability, the mean, max-T
    ({"name": "product"}, {"name": "bounded_sum"}),
    ({"name": "product"}, {"name": "generalized_mean", "p": 1.5}),
    ({"name": "godel"}, {"name": "maximum"}),
    ({"name": "product"}, {"name": "maximum"}),
    ({"name": "lukasiewicz"}, {"name": "maximum"}),
    ({"name": "yager", "p": 2.0}, {"name": "maximum"}),
]


@pytest.mark.parametrize("valuation", ["log", "probability"])
@pytest.mark.parametrize(("tnorm", "exists"), PAIRS)
@pytest.mark.parametrize("digits", [1, 2, 3])
def test_the_carries_give_the_enumerations_valuation_and_gradient(
    tnorm, exists, digits, valuation, monkeypatch
):
    """Position by position over the carries equals the grounding of all 10^(2N) digit tuples,
    in value and in gradient; N = 3 (a million tuples) on random digit distributions."""
    monkeypatch.setattr(addition, "ENUMERATED", 3)  # the reference enumerates up to N = 3
    operators = ops(tnorm, exists)
    exact = addition.in_log(operators, valuation)
    logits = torch.randn(3, 2 * digits, 10, generator=torch.Generator().manual_seed(digits))
    numbers = torch.randint(0, 10**digits, (3, 2), generator=torch.Generator().manual_seed(7))
    sums = addition.digits_of(numbers.sum(-1), digits)
    got, want = (logits.double().clone().requires_grad_(True) for _ in range(2))
    carried = addition.carried(got.log_softmax(-1), sums, operators, exact)
    enumerated = addition.sum_valuation(want.log_softmax(-1), sums, operators, exact)
    torch.testing.assert_close(carried, enumerated, rtol=1e-9, atol=1e-12)
    carried.sum().backward()
    enumerated.sum().backward()
    torch.testing.assert_close(got.grad, want.grad, rtol=1e-7, atol=1e-10)


LOG_PAIRS = [pair for pair in PAIRS if pair[0] == {"name": "product"}]


@pytest.mark.parametrize(("tnorm", "exists"), LOG_PAIRS)
@pytest.mark.parametrize("digits", [1, 2])
def test_a_log_valuation_is_the_log_of_the_value_in_value_and_gradient(tnorm, exists, digits):
    """In log space the product's valuations are the logs of the values computed as values
    (float64, above any floor), and the log-product loss of either is the same, gradient too."""
    operators = ops(tnorm, exists)
    logits = torch.randn(4, 2 * digits, 10, generator=torch.Generator().manual_seed(digits))
    numbers = torch.randint(0, 10**digits, (4, 2), generator=torch.Generator().manual_seed(3))
    sums = addition.digits_of(numbers.sum(-1), digits)
    got, want = (logits.double().clone().requires_grad_(True) for _ in range(2))
    log = addition.sum_valuation(got.log_softmax(-1), sums, operators, log=True)
    value = addition.sum_valuation(want.log_softmax(-1), sums, operators, log=False)
    assert (
        addition.in_log(operators)
        and not addition.in_log(operators, "probability")
        or (exists == {"name": "bounded_sum"})
    )
    torch.testing.assert_close(log.exp(), value, rtol=1e-9, atol=0.0)
    assert value.min() > 1e-7  # above the floor: both losses are the log itself
    addition.dfl_loss(log, operators, True).backward()
    addition.dfl_loss(value, operators, False).backward()
    torch.testing.assert_close(got.grad, want.grad, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize(("tnorm", "exists"), LOG_PAIRS)
@pytest.mark.parametrize("digits", [100, 1000])
def test_log_valuations_never_underflow_at_a_hundred_and_a_thousand_digits(tnorm, exists, digits):
    """Near-uniform digits at N = 100 and 1,000: the value would be about 10^-N (far below
    float32's range), its log is finite and every image's logits get a nonzero gradient."""
    logits = 0.1 * torch.randn(2, 2 * digits, 10, generator=torch.Generator().manual_seed(0))
    logits.requires_grad_(True)
    x, y = (torch.randint(0, 10, (2, digits), generator=torch.Generator().manual_seed(s))
            for s in (1, 2))  # fmt: skip
    operators = ops(tnorm, exists)
    log = addition.sum_valuation(logits.log_softmax(-1), addition.add_digits(x, y), operators, True)
    assert torch.isfinite(log).all() and (log < -digits).all()  # the value is below 10^-N
    assert (log.exp() == 0).all()  # as a value it underflows
    addition.dfl_loss(log, operators, True).backward()
    assert torch.isfinite(logits.grad).all() and (logits.grad.abs().sum(-1) > 0).all()


@pytest.mark.parametrize("digits", [1, 2])
def test_the_digits_marginals_are_those_of_the_enumerated_sums(digits):
    """Each digit of the sum's marginal (the ablation's loss) against the enumeration of all
    digit tuples: the probability of every value of every digit of x + y."""
    log_p = digit_probs(2, 2 * digits, seed=5)
    got = addition.digit_marginals(log_p).exp()
    p = log_p.exp()
    values = addition.place_values(digits).tolist()
    want = torch.zeros(2, digits + 1, 10, dtype=torch.float64)
    for tup in itertools.product(range(10), repeat=2 * digits):
        z = addition.digits_of(torch.tensor(sum(d * v for d, v in zip(tup, values, strict=True))),
                               digits)  # fmt: skip
        mass = torch.stack([math.prod(p[b, i, d] for i, d in enumerate(tup)) for b in range(2)])
        for k, digit in enumerate(z.tolist()):
            want[:, k, digit] += mass
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-12)
    loss = addition.digits_loss(log_p, addition.digits_of(torch.tensor([0, 7]), digits))
    assert loss.item() == pytest.approx(
        -sum(math.log(want[b, k, d]) for b, z in enumerate([0, 7])
             for k, d in enumerate(addition.digits_of(torch.tensor(z), digits).tolist()))
        / 2, rel=1e-9)  # fmt: skip


def test_the_validation_split_holds_out_the_last_training_sums_and_never_the_test_images():
    groups = addition.paired(6000, 15, 0)
    trained, held = addition.held_out(groups, 0.1)
    assert (len(trained), len(held)) == (180, 20)
    assert not set(trained.ravel()) & set(held.ravel())
    with pytest.raises(ValueError, match="none to hold out"):
        addition.held_out(groups[:1], 0.1)


def test_the_carries_scale_to_fifty_digits_and_refuse_the_pairs_that_do_not_factorize():
    digits = 50
    x = torch.randint(0, 10, (4, digits), generator=torch.Generator().manual_seed(0))
    y = torch.randint(0, 10, (4, digits), generator=torch.Generator().manual_seed(1))
    sums = addition.add_digits(x, y)
    assert int("".join(map(str, sums[0].tolist()))) == int("".join(map(str, x[0].tolist()))) + int(
        "".join(map(str, y[0].tolist()))
    )
    sharp = torch.full((4, 2 * digits, 10), -30.0).double()
    sharp.scatter_(2, torch.cat([x, y], 1).unsqueeze(-1), 0.0)  # the right digits, almost surely
    for tnorm, exists in PAIRS:
        operators = ops(tnorm, exists)
        value = addition.carried(sharp.log_softmax(-1), sums, operators, addition.in_log(operators))
        assert torch.isfinite(value).all()
    probability = addition.carried(sharp.log_softmax(-1), sums, ops(*PAIRS[0]), True).exp()
    assert probability.min() > 0.99  # the right digits make the sum almost sure
    with pytest.raises(ValueError, match=r"exists=maximum with any t-norm, exists=bounded_sum"):
        addition.check_digits(ops({"name": "product"}, {"name": "probabilistic_sum"}), 3)
    addition.check_digits(ops({"name": "product"}, {"name": "probabilistic_sum"}), 2)


@pytest.mark.slow
def test_fifteen_digit_addition_trains_end_to_end(tmp_path):
    record = train.run(
        *composed(tmp_path, "+experiment=mnist_addition_digits", "row=product_sum_n15")
    )
    assert record["status"] == "ok" and record["config"]["task"]["digits"] == 15
    assert record["config"]["data"]["batch_size"] == 4 and 0.0 <= record["test_accuracy"] <= 1.0


@pytest.mark.parametrize("name", tasks.names())
def test_a_tasks_yaml_holds_every_setting_its_class_declares_with_its_type(name):
    """The results module reads a task's settings from its yaml (no torch); its class declares
    them: the two agree."""
    declared = tasks.task_class(tasks.target_of({"task": {"name": name}})).setting_types()
    assert tasks.setting_types(name) == declared


def test_the_checkpoint_chosen_on_validation_keeps_the_test_accuracy_of_that_evaluation(
    monkeypatch,
):
    """Three evaluations (validation, test): the best validation accuracy first comes at the
    second, so its test accuracy is kept; the final and the best test accuracy are the test's
    own; nothing is chosen on the test set."""
    run = addition.AdditionRun(ops({"name": "product"}, {"name": "bounded_sum"}))
    seen = iter([(0.60, 0.9), (0.50, 0.8), (0.65, 0.9), (0.70, 0.9), (0.90, 0.9), (0.70, 0.95)])
    monkeypatch.setattr(run, "accuracies", lambda batches: next(seen))
    for _ in range(3):
        out = run.evaluate({"test": [], "validation": []})
    summary = run.summary()
    assert (summary["test_accuracy"], summary["best_test_accuracy"]) == (0.90, 0.90)
    assert summary["validation_accuracy"] == out["validation_accuracy"] == 0.70
    assert summary["best_validation_accuracy"] == 0.70
    assert summary["test_accuracy_at_best_validation"] == 0.65  # the second evaluation's
    assert summary["validation_digit_accuracy"] == 0.95  # the held-out images' digits, final
    alone = addition.AdditionRun(ops({"name": "product"}, {"name": "bounded_sum"}))
    monkeypatch.setattr(alone, "accuracies", lambda batches: (0.5, 0.9))
    alone.evaluate({"test": []})
    assert "validation_accuracy" not in alone.summary()  # no split held out: no such field


def test_a_held_out_split_is_evaluated_beside_the_test_split():
    data = addition.AdditionData(
        digits=1, validation=0.1, subset_train=400, subset_test=100, eval_batch_size=40
    )
    data.setup()
    batches = data.test_batches()
    assert sorted(batches) == ["test", "validation"]
    assert sum(len(s) for _, _, s in batches["test"]) == 50  # 100 test images, 2 a sum
    assert sum(len(s) for _, _, s in batches["validation"]) == 20  # 10% of the 200 sums
    assert len(data.train_groups) == 180
    held = {tuple(g) for g in data.splits["validation"][2].tolist()}
    assert not held & {tuple(g) for g in data.train_groups.tolist()}  # never trained on


def test_a_task_whose_data_lacks_what_the_lifecycle_reads_is_refused_before_training(
    tmp_path, monkeypatch
):
    import lightning as L

    from dfl_bench.tasks.contract import check_data_module
    from dfl_bench.tasks.mnist_kb import MnistKB

    class Partial(L.LightningDataModule):
        def train_dataloader(self):
            return []

        def test_batches(self, device):
            return []

    with pytest.raises(ValueError, match=r"lacks \['checksum', 'arrays'\]"):
        check_data_module(Partial(), "toy")
    for task in ("mnist_kb", "mnist_addition"):  # the shipped tasks declare all four
        train.checked(composed(tmp_path, f"task={task}")[0])
    monkeypatch.setattr(MnistKB, "data", lambda self, configs: Partial())
    cfg, _ = composed(tmp_path)
    with pytest.raises(ValueError, match=r"task 'mnist_kb': its data module Partial lacks"):
        train.checked(cfg)
    assert not (tmp_path / "records").exists() or not any((tmp_path / "records").rglob("*.json"))


RANKING_KB = """
from dfl_bench.logic import Family, Forall, Predicate, Var, knowledge_base

x, y, before = Var("x"), Var("y"), Predicate("before", 2)


@knowledge_base("ranking", truths={before: lambda y_i, y_j: y_i < y_j})
def ranking_kb():
    return (Family("ranking/1", Forall((x, y), before(x, y) >> ~before(y, x))),)
"""


def test_a_knowledge_base_in_a_folder_of_its_own_is_named_by_its_target(tmp_path, monkeypatch):
    """A KB like a task: `my_kbs.py` and `conf/kb/ranking.yaml` (`_target_`) in a folder of the
    user's, no package edit; it trains with its own NTN head, and a wrong target is one line."""
    import sys

    from dfl_bench.logic import KBS

    (tmp_path / "conf" / "kb").mkdir(parents=True)
    (tmp_path / "my_kbs.py").write_text(RANKING_KB)
    (tmp_path / "conf" / "kb" / "ranking.yaml").write_text(
        "_target_: my_kbs.ranking_kb\nname: ranking\nformulas: null\nweights: null\n"
        "scale: mean\nscope: family\nw_dfl: 1.0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    searchpath = f"hydra.searchpath=[file://{tmp_path / 'conf'}]"
    try:
        record = train.run(*composed(tmp_path, "kb=ranking", searchpath))
        assert record["status"] == "ok" and record["config"]["kb"]["name"] == "ranking"
        assert KBS["ranking"].predicates == ("before",)
        for target, message in [
            ("my_kbs.nothing", "does not import"),
            ("my_kbs.Var", "is not a knowledge base"),
        ]:
            cfg, _ = composed(tmp_path, "kb=ranking", searchpath, f"kb._target_={target}")
            with pytest.raises(ValueError, match=rf"kb._target_='{target}' {message}"):
                train.checked(cfg)
    finally:
        KBS.pop("ranking", None)
        sys.modules.pop("my_kbs", None)


def test_the_paper_task_reports_the_held_out_images_accuracy_and_the_test_at_its_best():
    from dfl_bench.tasks.mnist.dfl_run import DFLRun

    run = DFLRun(kb="ce_only", max_steps=10)
    x = torch.randn(6, 1, 28, 28)
    y = run.eval()(x).argmax(-1)
    right, wrong = [(x, y)], [(x, (y + 1) % 10)]
    out = run.evaluate({"test": right, "validation": wrong})
    assert out["accuracy"] == 1.0 and out["validation_accuracy"] == 0.0
    run.evaluate({"test": wrong, "validation": right})
    summary = run.summary()
    assert summary["validation_accuracy"] == summary["best_validation_accuracy"] == 1.0
    assert summary["test_accuracy_at_best_validation"] == 0.0  # the test at the held-out best
    assert "validation_accuracy" not in DFLRun(kb="ce_only", max_steps=10).summary()
