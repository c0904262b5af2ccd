"""In-process timings of the training iteration, its logic part, and the test-set evaluation.

What one "iteration" is here: `optimizer.zero_grad()`, `DFLModule.training_step(batch)` (the
exact method Lightning calls: CNN on the labeled + unlabeled images, NTN heads on all pairs of
both batches, CE + pair BCE + DFL loss), `loss.backward()`, `optimizer.step()`; outside the
Trainer, on pre-drawn MNIST batches (data loading is timed in the end-to-end runs instead).
The module is built from the real Hydra config (`conf/`, defaults plus overrides).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from itertools import cycle
from typing import Any

import torch
from hydra import compose, initialize_config_dir
from torch import Tensor

from dfl_bench import train
from dfl_bench.data import MnistDataModule
from dfl_bench.model import MaterializedNTN
from dfl_bench.module import DFLModule, interpretation, pair_truth, undersampled_bce
from dfl_bench.operators import KINDS, OperatorSet

Batch = dict[str, tuple[Tensor, Tensor]]
NEVER = 10**9


def compose_config(overrides: Sequence[str]) -> dict[str, Any]:
    """The resolved job config `python -m dfl_bench <overrides>` would run."""
    with initialize_config_dir(config_dir=train.CONFIG_DIR, version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    return train.resolved_config(cfg)


class BatchedMaterializedNTN(MaterializedNTN):
    """The materialized-pairs NTN (b*b concatenated pairs, per-pair bilinear) over leading dims."""

    def forward(self, e: Tensor) -> Tensor:
        """(..., b, d) embeddings -> (..., b, b) logits, one materialized batch at a time."""
        *lead, b, d = e.shape
        flat = [MaterializedNTN.forward(self, x) for x in e.reshape(-1, b, d)]
        return torch.stack(flat).reshape(*lead, b, b)


def materialize(module: DFLModule) -> DFLModule:
    """Swap every factorized NTN head for the materialized formulation with the same weights."""
    for name, head in module.net.heads.items():
        slow = BatchedMaterializedNTN(head.W.shape[1], head.W.shape[0])
        slow.load_state_dict(head.state_dict())
        module.net.heads[name] = slow.to(head.W.device)
    return module


def build_module(
    problem: str, log_every: int, device: torch.device, overrides: Sequence[str] = ()
) -> DFLModule:
    """The DFLModule of the default config for `problem`; logging steps iff log_every == 1."""
    config = compose_config([f"problem={problem}", *overrides])
    config["profile"]["log_every"] = log_every
    operators = OperatorSet.from_config({kind: config[kind] for kind in KINDS})
    return train.build_module(config, operators).to(device).train()


def load_data(
    batch_size: int, device: torch.device, subset_test: int | None = None
) -> MnistDataModule:
    """The real MNIST data module (1% labeled split) with tensors on `device`."""
    data = MnistDataModule(batch_size=batch_size, subset_test=subset_test)
    data.setup()
    data.train_x, data.train_y = data.train_x.to(device), data.train_y.to(device)
    return data


def draw_batches(data: MnistDataModule, batch_size: int, n: int) -> list[Batch]:
    """n consecutive labeled/unlabeled batches of size `batch_size` from the training stream,
    on the device of `data.train_x` (without a Trainer the stream itself yields CPU tensors)."""
    data.batch_size = batch_size
    device = data.train_x.device
    stream = iter(data.train_dataloader())
    return [
        {key: (x.to(device), y.to(device)) for key, (x, y) in next(stream).items()}
        for _ in range(n)
    ]


def iteration(module: DFLModule, batches: Sequence[Batch]) -> Callable[[], None]:
    """One training iteration per call: zero_grad, training_step, backward, optimizer step."""
    optimizer = module.configure_optimizers()
    source: Iterator[Batch] = cycle(batches)

    def run() -> None:
        optimizer.zero_grad(set_to_none=True)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*self.log.*")
            loss = module.training_step(next(source), 0)
        loss.backward()
        optimizer.step()

    return run


def logic_part(module: DFLModule, batch: Batch) -> Callable[[], None]:
    """The pair part of an iteration from fixed embeddings: NTN heads on all pairs of both
    batches, pair BCE, DFL loss, backward (what scales with the pair count b^2)."""
    (x_l, y_l), (x_u, _) = batch["labeled"], batch["unlabeled"]
    with torch.no_grad():
        logits, emb = module.net(torch.cat([x_l, x_u]))
    n = len(x_l)
    logits, emb = logits.requires_grad_(), emb.requires_grad_()
    truths = {p: pair_truth(p, y_l) for p in module.predicates}

    def run() -> None:
        pairs = module.net.pair_logits(torch.stack([emb[:n], emb[n:]]))
        loss = sum(undersampled_bce(pairs[p][0], truths[p]) for p in module.predicates)
        interp = interpretation(logits[n:], {p: v[1] for p, v in pairs.items()})
        loss = loss + module.w_dfl * module.kb(interp, module.ops).loss
        loss.backward()

    return run


def evaluation(module: DFLModule, data: MnistDataModule) -> Callable[[], None]:
    """One evaluation on the test set as the module runs it every `eval_every` steps."""
    batches = data.test_batches(module.device)
    return lambda: module.evaluate(batches)
