"""MNIST addition (Manhaeve et al., DeepProbLog, NeurIPS 2018) as a DFL task: two N-digit numbers
written as images, only their sum as the label; the digit classifier learns through the logic.

Data: the 60,000 training images paired without replacement (a permutation fixed by
`task.pairing_seed`) into 60,000 / (2N) training sums, the 10,000 test images into 10,000 / (2N)
test sums; a batch holds `data.batch_size` sums.

The sum formula, its valuation over the digit tuples or the carries, in log space, and its
losses: tasks/sum_formula.py.

Test metrics: `sum_accuracy` (the field's number: the sum of the per-image argmax digits is the
label), recorded as the run's test accuracy, and `digit_accuracy` over the test images.
`task.validation: f` holds out the last fraction f of the training sums (by the pairing) and
evaluates on them beside the test split: the record's `validation_accuracy` (final and best) and
`test_accuracy_at_best_validation`, the test accuracy at the evaluation whose validation
accuracy was the best (the checkpoint chosen on validation); nothing is chosen on the test set.
`task.loss: digits` replaces the loss by a cross-entropy on each of the N + 1 digits of the sum
(its marginal over the carries; PLIA's and CTSketch's encoding), an ablation of the exact loss.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from dfl_bench.operators import OperatorSet
from dfl_bench.schema import (
    BEST_TEST_ACCURACY,
    BEST_VALIDATION_ACCURACY,
    DIGIT_ACCURACY,
    GRADIENT_REACHED,
    TEST_ACCURACY,
    TEST_AT_BEST_VALIDATION,
    VALIDATION_ACCURACY,
    VALIDATION_DIGIT_ACCURACY,
    VALIDATION_FIELDS,
)
from dfl_bench.tasks.contract import Lockstep, Task, TaskRun
from dfl_bench.tasks.mnist.augment import augmented
from dfl_bench.tasks.mnist.data_checks import check_data
from dfl_bench.tasks.mnist.mnist_data import InMemoryData, Shuffled, normalize
from dfl_bench.tasks.mnist.mnist_sources import N_TEST, N_TRAIN, MnistArrays, load_mnist
from dfl_bench.tasks.mnist.nets import build_net
from dfl_bench.tasks.optim import gradient_reached
from dfl_bench.tasks.sum_formula import (  # noqa: F401  (the task's formula, read through here too)
    ENUMERATED,
    FACTORIZING,
    IMPOSSIBLE,
    add_digits,
    carried,
    check_digits,
    dfl_loss,
    digit_marginals,
    digit_pairs,
    digits_loss,
    digits_of,
    factorizes,
    in_log,
    place_values,
    sum_valuation,
    transitions,
    tuple_sums,
    value_of,
)
from dfl_bench.tasks.values import TASKS, check_augment


def group_labels(labels: np.ndarray, groups: np.ndarray, digits: int) -> Tensor:
    """The sums' digits (n, N + 1) of the image groups (n, 2N): x + y from their digit labels."""
    d = torch.from_numpy(labels[groups].astype(np.int64))
    return add_digits(d[:, :digits], d[:, digits:])


def paired(n: int, digits: int, seed: int) -> np.ndarray:
    """The images 0..n-1 grouped without replacement into n // (2N) samples of 2N, by `seed`."""
    order = np.random.default_rng(seed).permutation(n)
    size = 2 * digits
    return order[: n // size * size].reshape(-1, size)


def evaluated_sums(config: Mapping[str, Any], split: str = "test") -> int:
    """How many sums a run of this resolved config is evaluated on: the test split's, or
    (`split="validation"`) the held-out training sums under `task.validation`.

    >>> evaluated_sums({"task": {"digits": 100}, "data": {}})
    50
    >>> evaluated_sums({"task": {"digits": 15, "validation": 0.1}, "data": {}}, "validation")
    200
    """
    task, data = config["task"], config.get("data") or {}
    size = 2 * task["digits"]
    fraction = task.get("validation", 0.0)
    if split == "test":
        return (data.get("subset_test") or N_TEST) // size
    if not fraction:
        return 0
    sums = (data.get("subset_train") or N_TRAIN) // size
    return len(held_out(np.zeros((sums, 0)), fraction)[1])


def held_out(groups: np.ndarray, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """The training sums' groups split into (trained on, held out): the last `fraction` of them
    (at least one sum each), the validation split a budget is chosen on.

    >>> [len(part) for part in held_out(np.zeros((2000, 30)), 0.1)]
    [1800, 200]
    """
    n = len(groups)
    keep = min(n - 1, max(1, round(n * (1.0 - fraction))))
    if n < 2:
        raise ValueError(f"task.validation={fraction}: {n} training sum(s), none to hold out")
    return groups[:keep], groups[keep:]


class SumStream:
    """Endless batches of (images (B, 2N, 1, 28, 28), sums (B,)), one epoch = one pass over the
    training sums; resumable (`state_dict`: generator, pass order and position)."""

    def __init__(self, x: Tensor, groups: Tensor, sums: Tensor, batch: int, seed: int) -> None:
        self.x, self.groups, self.sums = x, groups, sums
        self._generator = torch.Generator(device=x.device).manual_seed(seed)
        self._order = Shuffled(torch.arange(len(groups), device=x.device), batch, self._generator)

    def __len__(self) -> int:
        return self._order.per_pass

    def __iter__(self) -> Iterator[dict[str, Tensor]]:
        for _ in range(self._order.left_in_pass):
            i = next(self._order)
            yield {"images": self.x[self.groups[i]], "sums": self.sums[i]}

    def state_dict(self) -> dict[str, Any]:
        return {"generator": self._generator.get_state(), "order": self._order.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self._generator.set_state(state["generator"])
        self._order.load_state_dict(state["order"])


class AdditionData(InMemoryData):
    """The MNIST addition split (module doc) as in-memory tensors on the training device, for runs
    of the batch orders `seeds` (one stream each, in lockstep); takes the `data` config (its
    labeled fraction and split seed do not apply)."""

    def __init__(
        self,
        digits: int = 1,
        pairing_seed: int = 0,
        validation: float = 0.0,
        source: str = "auto",
        root: str | None = None,
        cache_dir: str | None = None,
        batch_size: int = 64,
        seeds: Sequence[int] = (0,),
        subset_train: int | None = None,
        subset_test: int | None = None,
        eval_batch_size: int = 2000,
        **unused: Any,
    ) -> None:
        super().__init__()
        self.digits, self.pairing_seed, self.validation = digits, pairing_seed, validation
        self.source, self.root, self.cache_dir = source, root, cache_dir
        self.batch_size, self.seeds, self.eval_batch_size = batch_size, list(seeds), eval_batch_size
        self.subset_train, self.subset_test = subset_train, subset_test
        self.arrays: MnistArrays | None = None

    def setup(self, stage: str | None = None) -> None:
        if self.arrays is not None:
            return
        self.arrays = a = load_mnist(self.source, self.root, self.cache_dir)
        n_train, n_test = self.subset_train or N_TRAIN, self.subset_test or N_TEST
        train = paired(n_train, self.digits, self.pairing_seed)
        self.train_x = normalize(a.train_x[:n_train])
        test = paired(n_test, self.digits, self.pairing_seed + 1)
        self.splits = {"test": (normalize(a.test_x[:n_test]), a.test_y, test)}
        if self.validation:  # the last sums of the pairing are held out and evaluated on
            train, held = held_out(train, self.validation)
            self.splits["validation"] = (self.train_x, a.train_y, held)
        self.train_groups = torch.from_numpy(train)
        self.train_sums = group_labels(a.train_y, train, self.digits)

    def train_dataloader(self) -> Lockstep:
        """Each run's SumStream (its seed's order), stacked: images (R, B, 2N, 1, 28, 28)."""
        device = self._device()
        x, groups, sums = (t.to(device) for t in (self.train_x, self.train_groups, self.train_sums))
        return Lockstep(SumStream(x, groups, sums, self.batch_size, s) for s in self.seeds)

    def test_batches(
        self, device: torch.device | str = "cpu"
    ) -> dict[str, list[tuple[Tensor, ...]]]:
        """Each split evaluated on (`test`, and `validation` under task.validation): batches of
        (images (B, 2N, 1, 28, 28), digits (B, 2N), sums' digits (B, N + 1)) of
        eval_batch_size images."""
        per = max(1, self.eval_batch_size // (2 * self.digits))
        out = {}
        for split, (images, labels, groups) in self.splits.items():
            x = images.to(device)
            digits = torch.from_numpy(labels[groups].astype(np.int64))
            sums = group_labels(labels, groups, self.digits)
            parts = zip(
                torch.from_numpy(groups).split(per), digits.split(per), sums.split(per), strict=True
            )
            out[split] = [(x[g.to(device)], d.to(device), s.to(device)) for g, d, s in parts]
        return out


class AdditionRun(TaskRun):
    """One run of the digit network trained on sums only (module doc)."""

    TERMS = ("dfl",)

    def __init__(
        self,
        operators: OperatorSet,
        digits: int = 1,
        optimizer: Mapping[str, Any] | None = None,
        log_every: int = 50,
        eval_every: int = 1000,
        max_steps: int | None = None,
        seed: int = 0,
        valuation: str = "log",
        loss: str = "exact",
        net: Mapping[str, Any] | None = None,
        augment: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(seed, optimizer, log_every, eval_every, max_steps)
        self.augment = dict(augment or {})
        check_digits(operators, digits)
        self.ops, self.digits, self.loss = operators, digits, loss
        self.log = in_log(operators, valuation)
        self.net = build_net(net)
        self.accuracy: float | None = None
        self.best_accuracy: float | None = None
        self.digit_accuracy: float | None = None
        self.validation: dict[str, float | None] = dict.fromkeys(VALIDATION_FIELDS)

    def step_loss(self, batch: Mapping[str, Tensor], logging: bool) -> tuple[Tensor, Tensor, None]:
        """-forall of the batch's sum valuations (its one term); under `task.loss: digits` the
        cross-entropy of the sum's digits instead (`digits_loss`)."""
        images, sums = batch["images"], batch["sums"]
        flat = images.flatten(0, 1)
        rng = self.generator()
        logits, _ = self.net(augmented(flat, self.augment, rng), rng)
        log_probs = logits.log_softmax(-1).view(*images.shape[:2], 10)
        if self.loss == "digits":
            loss = digits_loss(log_probs, sums)
        else:
            loss = dfl_loss(sum_valuation(log_probs, sums, self.ops, self.log), self.ops, self.log)
        return loss, loss.view(1), None

    @torch.inference_mode()
    def accuracies(self, batches: list[tuple[Tensor, ...]]) -> tuple[float, float]:
        """(sum accuracy (argmax digits, added), digit accuracy) on `batches`, in eval mode."""
        was_training = self.training
        self.eval()
        right_sums = right_digits = n_sums = n_digits = 0
        n = self.digits
        for images, digits, sums in batches:
            logits, _ = self.net(images.flatten(0, 1))
            predicted = logits.argmax(-1).view(digits.shape)
            right_digits += int((predicted == digits).sum())
            added = add_digits(predicted[:, :n], predicted[:, n:])
            right_sums += int((added == sums).all(-1).sum())
            n_digits, n_sums = n_digits + digits.numel(), n_sums + len(sums)
        self.train(was_training)
        return right_sums / max(n_sums, 1), right_digits / max(n_digits, 1)

    def evaluate(self, batches: Mapping[str, list[tuple[Tensor, ...]]]) -> dict[str, float]:
        """The test split's sum and digit accuracy; with a validation split (`AdditionData`),
        its sum accuracy too, and the test accuracy kept at the best validation accuracy."""
        self.accuracy, self.digit_accuracy = self.accuracies(batches["test"])
        self.best_accuracy = max(self.best_accuracy or 0.0, self.accuracy)
        out = {"sum_accuracy": self.accuracy, DIGIT_ACCURACY: self.digit_accuracy}
        if "validation" in batches:
            held, held_digits = self.accuracies(batches["validation"])
            v = self.validation
            v[VALIDATION_DIGIT_ACCURACY] = held_digits
            if v[BEST_VALIDATION_ACCURACY] is None or held > v[BEST_VALIDATION_ACCURACY]:
                v[BEST_VALIDATION_ACCURACY], v[TEST_AT_BEST_VALIDATION] = held, self.accuracy
            v[VALIDATION_ACCURACY] = out[VALIDATION_ACCURACY] = held
        return out

    def summary(self, optimizer: torch.optim.Optimizer | None = None) -> dict[str, Any]:
        """The record's results: TEST_ACCURACY is the sum accuracy (the field's number), and
        whether any gradient reached the network (with no supervised term, a conjunction that
        is 0 with a zero derivative at the untrained network's digits trains nothing)."""
        return {
            TEST_ACCURACY: self.accuracy,
            BEST_TEST_ACCURACY: self.best_accuracy,
            "sum_accuracy": self.accuracy,
            DIGIT_ACCURACY: self.digit_accuracy,
            GRADIENT_REACHED: (
                None if optimizer is None else gradient_reached(optimizer, self.parameters())
            ),
            "evaluated_step": self.evaluated_step,
            **{k: v for k, v in self.validation.items() if v is not None},
        }

    def state(self) -> dict[str, Any]:
        return {
            **super().state(),
            TEST_ACCURACY: self.accuracy,
            BEST_TEST_ACCURACY: self.best_accuracy,
            DIGIT_ACCURACY: self.digit_accuracy,
            "validation": dict(self.validation),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        super().load_state(state)
        self.accuracy, self.best_accuracy = state[TEST_ACCURACY], state[BEST_TEST_ACCURACY]
        self.digit_accuracy = state[DIGIT_ACCURACY]
        self.validation = {**dict.fromkeys(VALIDATION_FIELDS), **state.get("validation", {})}


class MnistAddition(Task):
    """MNIST addition (module doc); conf/task/mnist_addition.yaml names it."""

    NAME = "mnist_addition"
    IGNORES = TASKS[NAME].ignores
    SETTINGS = TASKS[NAME].ints  # its settings' one declaration, read without torch too
    CHOICES = TASKS[NAME].choices
    FRACTIONS = TASKS[NAME].fractions
    MEASURES = (("digit accuracy", DIGIT_ACCURACY),)

    def check(self, config: Mapping[str, Any]) -> None:
        """Its settings and the data it reads (none of those its settings give its data)."""
        super().check(config)
        TASKS[self.NAME].check_data(self.NAME, config["data"])
        check_data(config["data"])
        check_augment(config.get("augment") or {})

    def build(self, config: Mapping[str, Any], operators: OperatorSet) -> AdditionRun:
        """One run of the task from a resolved job config."""
        profile = config["profile"]
        return AdditionRun(
            operators,
            digits=config["task"]["digits"],
            optimizer=config["optimizer"],
            log_every=profile["log_every"],
            eval_every=profile["eval_every"],
            max_steps=profile["max_steps"],
            seed=config["seed"],
            valuation=config["task"].get("valuation", "log"),
            loss=config["task"].get("loss", "exact"),
            net=config.get("net"),
            augment=config.get("augment"),
        )

    def data(self, configs: Sequence[Mapping[str, Any]]) -> AdditionData:
        """The task's data for runs of resolved job configs that differ in their seeds only."""
        task, options = configs[0]["task"], dict(configs[0]["data"])
        return AdditionData(
            digits=task["digits"],
            pairing_seed=task["pairing_seed"],
            validation=task.get("validation", 0.0),
            seeds=[c["seed"] for c in configs],
            **options,
        )
