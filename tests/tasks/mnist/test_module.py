"""One run of Section 9.3 (DFLRun) in the training module: loss terms, logging, evaluation,
summary, failures."""

from __future__ import annotations

import math

import lightning as L
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from lightning.pytorch.loggers import Logger

from dfl_bench.lifecycle.records import SUMMARY_FIELDS
from dfl_bench.logic import KBResult
from dfl_bench.tasks.contract import nonfinite_reason, nonfinite_state_reason
from dfl_bench.tasks.mnist.dfl_run import DFLRun, undersampled_bce
from dfl_bench.tasks.mnist.stack_data import StackDataModule
from dfl_bench.tasks.optim import spec
from dfl_bench.training import RunsModule

OPS = {
    "tnorm": {"name": "product"},
    "tconorm": {"name": "product"},
    "implication": {"name": "reichenbach"},
    "forall": {"name": "log_product", "reduction": "mean"},
    "exists": {"name": "generalized_mean", "p": 1.5},
}


class Recorder(Logger):
    """Keeps every (step, metrics) the trainer and module write."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[int, dict[str, float]]] = []

    @property
    def name(self) -> str:
        return "recorder"

    @property
    def version(self) -> int:
        return 0

    def log_hyperparams(self, params, *args, **kwargs) -> None:
        pass

    def log_metrics(self, metrics, step=None) -> None:
        self.rows.append((step, dict(metrics)))

    def steps_with(self, key: str) -> list[int]:
        return [step for step, metrics in self.rows if key in metrics]


DATA = {"subset_train": 2000, "subset_test": 256, "labeled_fraction": 0.05, "batch_size": 32}


def train(
    kb: str = "same",
    steps: int = 6,
    log_every: int = 2,
    eval_every: int = 3,
    seed: int = 0,
    callbacks: tuple[L.Callback, ...] = (),
    module: DFLRun | None = None,
    poison_at: int | None = None,
) -> tuple[RunsModule, Recorder]:
    """Train one run for `steps` steps on a small MNIST subset (its weights NaN before 0-based
    step `poison_at`); returns the training module and the run's log."""
    L.seed_everything(seed, verbose=False)
    module = module or DFLRun(
        kb,
        OPS,
        w_dfl=1.0,
        log_every=log_every,
        eval_every=eval_every,
        metrics_tail=0.5,
        max_steps=steps,
        seed=seed,
    )
    recorder = Recorder()
    runs = RunsModule([module], [recorder], [poison_at])
    trainer = L.Trainer(
        max_steps=steps,
        logger=False,
        callbacks=list(callbacks),
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(runs, datamodule=StackDataModule(DATA, seeds=[seed], split_seeds=[seed]))
    return runs, recorder


def fit(**kwargs) -> tuple[DFLRun, Recorder]:
    """`train`'s run and its log."""
    runs, recorder = train(**kwargs)
    return runs.members[0], recorder


@given(
    target=st.lists(st.booleans(), min_size=1, max_size=60),
    pos_logit=st.floats(-5, 5),
    neg_logit=st.floats(-5, 5),
    seed=st.integers(0, 1000),
)
@settings(max_examples=30, deadline=None)
def test_undersampled_bce_balances_negatives(target, pos_logit, neg_logit, seed):
    torch.manual_seed(seed)
    t = torch.tensor(target)
    values = torch.tensor([neg_logit, pos_logit], dtype=torch.float64)
    logits = values[t.long()].requires_grad_()
    loss = undersampled_bce(logits, t)
    n_pos, n_neg = int(t.sum()), int((~t).sum())
    n_chosen = min(n_pos, n_neg)
    bce_pos = math.log1p(math.exp(-pos_logit))
    bce_neg = math.log1p(math.exp(neg_logit))
    expected = (n_pos * bce_pos + n_chosen * bce_neg) / max(n_pos + n_chosen, 1)
    assert loss.item() == pytest.approx(expected, rel=1e-9, abs=1e-12)
    loss.backward()
    assert int((logits.grad[~t] != 0).sum()) == n_chosen


@pytest.mark.slow
def test_training_reduces_the_loss_and_learns_digits():
    module, log = fit(steps=40, log_every=5, eval_every=0)
    totals = [m["loss/total"] for _, m in log.rows if "loss/total" in m]
    assert len(totals) == 8
    assert sum(totals[-3:]) < sum(totals[:3])
    assert module.accuracy > 0.3  # chance is 0.1


@pytest.mark.parametrize("kb", ["same", "sum9", "both", "ce_only"])
def test_summary_keys_and_kb_heads(kb):
    runs, log = train(kb=kb, steps=4)
    module, summary = runs.members[0], runs.summary(0)
    assert set(SUMMARY_FIELDS) <= set(summary)
    assert summary["steps"] == 4 and 0.0 <= summary["test_accuracy"] <= 1.0
    heads = {"same": ["same"], "sum9": ["sum9"], "both": ["same", "sum9"], "ce_only": []}
    assert sorted(module.net.heads) == heads[kb]
    losses = {k: v for _, m in log.rows for k, v in m.items() if k.startswith("loss/")}
    if kb == "ce_only":
        assert losses["loss/dfl"] == losses["loss/pair"] == 0.0
        assert summary["cons_ratio"] is None and summary["pair_accuracy"] is None
    else:
        assert losses["loss/dfl"] != 0.0 and losses["loss/pair"] > 0.0
        assert 0.0 <= summary["pair_accuracy"] <= 1.0
        assert summary["cons_magnitude"] > 0.0 and 0.0 <= summary["cons_ratio"] <= 1.0


def test_metrics_only_on_logging_steps():
    module = DFLRun("same", OPS, log_every=3, eval_every=0, max_steps=7)
    kb, calls = module.kb, []

    def spy(interp, ops, labels=None):
        calls.append(labels is not None)
        return kb(interp, ops, labels=labels)

    module.kb = spy
    _, log = fit(module=module, steps=7, log_every=3)
    assert [step for step, with_labels in enumerate(calls, 1) if with_labels] == [3, 6]
    assert len(calls) == 7
    assert log.steps_with("metrics/cons_ratio") == log.steps_with("loss/total")
    assert len(log.steps_with("metrics/cons_ratio")) == 2
    assert len(log.steps_with("metrics/same/2/cu_ant")) == 2


def test_evaluation_every_eval_every_steps_and_at_the_end():
    module, log = fit(steps=7, log_every=1, eval_every=3)
    assert log.steps_with("test/accuracy") == [3, 6, 7]
    assert module.training
    assert module.best_accuracy >= module.accuracy


def test_evaluation_does_not_change_training_and_best_is_the_max_over_evaluations():
    """The authors test every 1,000 iterations and report the best (docs/fidelity.md): evaluating
    must leave the weights, the training log and the ratios as they are."""
    often, log_often = fit(steps=6, log_every=1, eval_every=1, seed=1)
    never, log_never = fit(steps=6, log_every=1, eval_every=0, seed=1)
    for p, q in zip(often.parameters(), never.parameters(), strict=True):
        assert torch.equal(p, q)

    def training(log: Recorder) -> list[tuple[int, dict[str, float]]]:
        rows = [(s, {k: v for k, v in m.items() if not k.startswith("test/")}) for s, m in log.rows]
        return [(s, m) for s, m in rows if m]

    assert training(log_often) == training(log_never)
    accuracies = [m["test/accuracy"] for _, m in log_often.rows if "test/accuracy" in m]
    assert len(accuracies) == 6 and log_never.steps_with("test/accuracy") == [6]
    assert often.best_accuracy == max(accuracies)
    assert never.best_accuracy == never.accuracy == often.accuracy
    differs = {k for k in often.summary() if often.summary()[k] != never.summary()[k]}
    assert differs <= {"best_test_accuracy"}


def test_nan_weights_fail_the_run_at_its_next_logging_step_naming_the_first_bad_step():
    runs, log = train(steps=8, log_every=2, poison_at=2)  # NaN weights before step 3
    assert runs.failure(0) == nonfinite_reason(3, "dfl")
    assert runs.global_step == 3 and runs.summary(0)["steps"] == 3  # no update from step 4 on
    assert log.steps_with("loss/total") == [1]  # step 2's log; step 4 retired it unlogged


def test_a_weight_that_overflows_adams_second_moment_fails_the_run_at_its_next_logging_step():
    """The loss is finite, but the squared gradient is inf in exp_avg_sq."""
    module = DFLRun("same", OPS, w_dfl=1e38, log_every=2, eval_every=0, max_steps=6)
    runs, log = train(module=module, steps=6, log_every=2)
    assert runs.failure(0) == nonfinite_state_reason(1, "exp_avg_sq")
    assert runs.summary(0)["steps"] == 1 and log.steps_with("test/accuracy") == []
    fine, _ = train(module=DFLRun("same", OPS, w_dfl=1e20, log_every=2, eval_every=0, max_steps=6))
    assert fine.failure(0) is None and fine.summary(0)["steps"] == 6


def test_nan_dfl_term_is_named():
    module = DFLRun("same", OPS, log_every=1, eval_every=0, max_steps=3)

    def nan_kb(interp, ops, labels=None):
        return KBResult(interp["same"].sum() * math.nan, {}, {}, None)

    module.kb = nan_kb
    runs, _ = train(module=module, steps=3, log_every=1)
    assert runs.failure(0) == "non-finite loss: loss term 'dfl' is not finite at step 1"


def test_same_seed_same_run_other_seed_other_run():
    first, log1 = fit(steps=5, log_every=1, seed=3)
    second, log2 = fit(steps=5, log_every=1, seed=3)
    assert first.summary() == second.summary()
    assert log1.rows == log2.rows
    for p, q in zip(first.parameters(), second.parameters(), strict=True):
        assert torch.equal(p, q)
    third, _ = fit(steps=5, log_every=1, seed=4)
    assert third.summary()["cons_magnitude"] != first.summary()["cons_magnitude"]


class DrawGlobal(L.Callback):
    """Consume torch's global RNG before every step, as other code in the process might."""

    def on_train_batch_start(self, trainer, pl_module, *args) -> None:
        torch.rand(7)


def test_a_runs_random_draws_are_its_own():
    alone, log1 = fit(steps=4, log_every=1, seed=2)
    disturbed, log2 = fit(steps=4, log_every=1, seed=2, callbacks=(DrawGlobal(),))
    assert log1.rows == log2.rows
    for p, q in zip(alone.parameters(), disturbed.parameters(), strict=True):
        assert torch.equal(p, q)


def test_checkpoint_keeps_the_summary_state():
    module, _ = fit(steps=4)
    fresh = DFLRun("same", OPS, max_steps=4)
    fresh.load_state(module.state())
    assert fresh.summary() == module.summary()
    assert torch.equal(fresh.generator().get_state(), module.generator().get_state())


def test_optimizers_and_validation():
    params = [torch.nn.Parameter(torch.zeros(2))]
    sgd = spec({"name": "sgd"}).build(params)
    assert sgd.defaults["lr"] == 0.01 and sgd.defaults["momentum"] == 0.5
    adam = spec({"name": "adam"}).build(params).defaults
    assert adam["lr"] == 1e-3 and adam["fused"] is True  # conf/optimizer/adam.yaml, their home
    assert spec({"name": "adam", "fused": False}).build(params).defaults["fused"] is False
    for fused in (1, 0, None):  # torch's default is None; the yaml's `fused: true` says a flag
        with pytest.raises(ValueError, match=r"optimizer.fused must be true or false"):
            spec({"name": "adam", "fused": fused})
    with pytest.raises(ValueError, match=r"valid choices: \['adam', 'sgd'\]"):
        spec({"name": "rmsprop"}).build(params)
    with pytest.raises(ValueError, match="has no parameters"):
        DFLRun("same", OPS, optimizer={"name": "sgd", "nesterov_boost": 1})
    with pytest.raises(ValueError, match="valid choices"):
        DFLRun("sum10", OPS)
    with pytest.raises(ValueError, match="needs operators"):
        DFLRun("same", None, w_dfl=1.0)
    assert DFLRun("same", None, w_dfl=0.0).kb is None


def test_the_cosine_schedule():
    params = [torch.nn.Parameter(torch.zeros(2))]
    assert isinstance(spec({"name": "sgd"}).configure(params, 10), torch.optim.SGD)
    configured = spec({"name": "adam", "lr": 2e-3, "cosine_final": 0.1}).configure(params, 10)
    optimizer, schedule = configured["optimizer"], configured["lr_scheduler"]["scheduler"]
    lrs = []
    for _ in range(12):  # past the budget it stays at the last step's rate
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        schedule.step()
    assert lrs[0] == pytest.approx(2e-3) and lrs[5] == pytest.approx(1.1e-3)
    assert lrs[10] == lrs[11] == pytest.approx(2e-4)
    assert all(a >= b for a, b in zip(lrs, lrs[1:], strict=False))
    with pytest.raises(ValueError, match=r"cosine_final must be a fraction in \(0, 1\]"):
        spec({"name": "adam", "cosine_final": 0.0}).configure(params, 10)


def test_the_warmup_rises_linearly_to_the_schedule_then_follows_it():
    params = [torch.nn.Parameter(torch.zeros(2))]
    configured = spec({"name": "adam", "lr": 2e-3, "warmup": 4}).configure(params, 10)
    optimizer, schedule = configured["optimizer"], configured["lr_scheduler"]["scheduler"]
    lrs = []
    for _ in range(6):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        schedule.step()
    assert lrs == pytest.approx([5e-4, 1e-3, 1.5e-3, 2e-3, 2e-3, 2e-3])
    both = spec({"name": "adam", "lr": 2e-3, "cosine_final": 0.1, "warmup": 2})
    both = both.configure(params, 10)
    factor = both["lr_scheduler"]["scheduler"].lr_lambdas[0]
    cosine = spec({"name": "adam", "lr": 2e-3, "cosine_final": 0.1}).configure(params, 10)
    plain = cosine["lr_scheduler"]["scheduler"].lr_lambdas[0]
    assert factor(0) == pytest.approx(plain(0) / 2) and factor(5) == pytest.approx(plain(5))
    assert isinstance(spec({"name": "adam", "warmup": 0}).configure(params, 10), torch.optim.Adam)
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="warmup must be a whole number of steps"):
            spec({"name": "adam", "warmup": bad}).configure(params, 10)
    for bad in (True, False, "0.1", 0.0, 1.5):  # a boolean is no fraction (True was 1.0)
        with pytest.raises(ValueError, match="cosine_final must be a fraction"):
            spec({"name": "adam", "cosine_final": bad}).configure(params, 10)


def test_a_warmup_as_long_as_the_run_is_refused_before_it_trains():
    assert spec({"name": "adam", "warmup": 29}, 30).warmup == 29
    for warmup in (30, 1000):
        with pytest.raises(ValueError, match=r"optimizer.warmup=\d+ steps is not shorter"):
            spec({"name": "adam", "warmup": warmup}, 30)
        with pytest.raises(ValueError, match=r"optimizer.warmup=\d+ steps is not shorter"):
            DFLRun("same", OPS, optimizer={"name": "adam", "warmup": warmup}, max_steps=30)


@pytest.mark.parametrize(("kb", "w_dfl", "images"), [("same", 1.0, 64), ("same", 0.0, 32)])
def test_the_cnn_sees_the_unlabeled_batch_only_when_a_dfl_term_reads_it(kb, w_dfl, images):
    seen: list[int] = []
    module = DFLRun(kb, OPS, w_dfl=w_dfl, log_every=2, eval_every=0, max_steps=2)
    module.net.digits.conv1.register_forward_hook(
        lambda mod, inp, out: seen.append(len(inp[0])) if mod.training else None
    )
    fit(kb=kb, steps=2, module=module)
    assert seen == [images, images]


@pytest.mark.slow
@pytest.mark.parametrize("kb", ["same", "sum9"])
def test_every_operators_dfl_term_traces_as_one_graph_for_compile_dfl(kb):
    """`compile_dfl` compiles `dfl_term` whole (fullgraph): every registered operator of each
    kind the knowledge base calls, swapped into the default set, traces without a graph break and
    gives the eager value; `same` calls T, I and A, `sum9` every kind, so `sum9` swaps only the
    kinds `same` does not call (an operator traces or breaks alike in either formula)."""
    import dataclasses

    from dfl_bench.operators.registry import KINDS, choices
    from dfl_bench.tasks.mnist.dfl_run import dfl_term

    torch.manual_seed(0)
    logits = torch.randn(64, 10)
    pairs = {"same": torch.randn(64, 64)} if kb == "same" else {"sum9": torch.randn(64, 64)}
    default, called = DFLRun(kb, OPS, max_steps=1), set()

    def spy(kind, fn):
        return lambda *args, **kwargs: called.add(kind) or fn(*args, **kwargs)

    spied = {kind: spy(kind, getattr(default.ops, kind)) for kind in KINDS}
    dfl_term(default.kb, dataclasses.replace(default.ops, **spied), logits, pairs)
    in_same = {"tnorm", "implication", "forall"}
    assert called == (in_same if kb == "same" else set(KINDS))
    swapped = {
        f"{kind}={name}": DFLRun(kb, {**OPS, kind: {"name": name}}, max_steps=1).ops
        for kind in sorted(called if kb == "same" else called - in_same)
        for name in choices(kind)
    }

    def every_term(sets):  # one trace for all: a graph break in any term fails it
        return [dfl_term(default.kb, ops, logits, pairs) for ops in sets]

    compiled = torch.compile(every_term, backend="eager", dynamic=False, fullgraph=True)
    try:
        got = compiled(list(swapped.values()))
    except torch._dynamo.exc.Unsupported:  # name the operators that break the graph
        traced = torch.compile(dfl_term, backend="eager", dynamic=False, fullgraph=True)
        torch._dynamo.config.recompile_limit = len(swapped)
        broken = []
        for name, ops in swapped.items():
            try:
                traced(default.kb, ops, logits, pairs)
            except torch._dynamo.exc.Unsupported:
                broken.append(name)
        raise AssertionError(f"graph breaks in the DFL term of {broken}") from None
    for (name, ops), value in zip(swapped.items(), got, strict=True):
        torch.testing.assert_close(value, dfl_term(default.kb, ops, logits, pairs), msg=name)


def test_gradient_reached_says_whether_adam_ever_saw_a_nonzero_gradient():
    from dfl_bench.tasks.optim import gradient_reached

    w = torch.nn.Parameter(torch.ones(3))
    adam = spec({"name": "adam"}).build([w])
    assert gradient_reached(adam) is False  # no step yet
    (0.0 * w.relu().sum() - torch.relu(-w).sum()).backward()  # a graph, every derivative 0
    adam.step()
    assert w.grad is not None and gradient_reached(adam) is False
    assert torch.equal(w.detach(), torch.ones(3))
    w.grad = torch.tensor([0.0, 1e-30, 0.0])
    adam.step()
    assert gradient_reached(adam) is True
    assert gradient_reached(spec({"name": "sgd"}).build([w])) is None


def test_a_fit_follows_its_schedule_step_by_step():
    """The step owns its update (manual optimization), so Lightning steps no schedule: the
    module steps it after each update. A warmup over 4 steps ends at the full rate; a cosine to
    a tenth over 6 ends at a tenth."""
    rates = {}
    for name, cfg in {
        "warmup": {"name": "adam", "lr": 1e-3, "warmup": 4},
        "cosine": {"name": "adam", "lr": 1e-3, "cosine_final": 0.1},
    }.items():
        L.seed_everything(0, verbose=False)
        module = DFLRun(
            "same", OPS, w_dfl=1.0, log_every=2, eval_every=3, metrics_tail=0.5, max_steps=6,
            optimizer=cfg,
        )  # fmt: skip
        runs, _ = train(steps=6, module=module)
        rates[name] = runs.trainer.optimizers[0].param_groups[0]["lr"]
    assert rates["warmup"] == pytest.approx(1e-3)
    assert rates["cosine"] == pytest.approx(1e-4)
