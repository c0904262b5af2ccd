"""In-process timings of the training iteration, its logic part, and the test-set evaluation.

What one "iteration" is here: `RunsModule.iterate` of a module of one run, the step Lightning's
`training_step` takes (CNN on the labeled + unlabeled images, NTN heads on all pairs of both
batches, CE + pair BCE + DFL loss, backward, the optimizer's update); outside the Trainer, on
pre-drawn MNIST batches (data loading is timed in the end-to-end runs instead).
The module is built from the real Hydra config (`conf/`, defaults plus overrides).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import cycle
from typing import Any

import torch
import torch.nn.functional as F
from hydra import compose, initialize_config_dir
from torch import Tensor

from dfl_bench import tasks
from dfl_bench.lifecycle import train
from dfl_bench.operators import KINDS, OperatorSet
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.tasks.contract import stacked
from dfl_bench.tasks.mnist.dfl_run import DFLRun, interpretation, pair_truth, undersampled_bce
from dfl_bench.tasks.mnist.mnist_data import MnistDataModule
from dfl_bench.tasks.mnist.nets import MnistNet
from dfl_bench.tasks.mnist.ntn import MaterializedNTN
from dfl_bench.training import RunsModule

Batch = dict[str, tuple[Tensor, Tensor]]
NEVER = 10**9


def compose_config(overrides: Sequence[str]) -> dict[str, Any]:
    """The resolved job config `python -m dfl_bench <overrides>` would run."""
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    return train.resolved_config(cfg)


class BatchedMaterializedNTN(MaterializedNTN):
    """The materialized-pairs NTN (b*b concatenated pairs, per-pair bilinear) over leading dims."""

    def forward(self, e: Tensor) -> Tensor:
        """(..., b, d) embeddings -> (..., b, b) logits, one materialized batch at a time."""
        *lead, b, d = e.shape
        flat = [MaterializedNTN.forward(self, x) for x in e.reshape(-1, b, d)]
        return torch.stack(flat).reshape(*lead, b, b)


def materialize(module: DFLRun) -> DFLRun:
    """Swap every factorized NTN head for the materialized formulation with the same weights."""
    for name, head in module.net.heads.items():
        dim, k = head.W.shape[:2]
        slow = BatchedMaterializedNTN(dim, k, head.c is not None)
        slow.load_state_dict(head.state_dict())
        module.net.heads[name] = slow.to(head.W.device)
    return module


def build_module(
    kb: str, log_every: int, device: torch.device, overrides: Sequence[str] = ()
) -> DFLRun:
    """The DFLRun of the default config for `kb`; logging steps iff log_every == 1."""
    config = compose_config([f"kb={kb}", *overrides])
    config["profile"]["log_every"] = log_every
    operators = OperatorSet.from_config({kind: config[kind] for kind in KINDS})
    return tasks.task_of(config).build(config, operators).to(device).train()


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


def iteration(module: DFLRun, batches: Sequence[Batch]) -> Callable[[], None]:
    """One training iteration per call, as a job trains one run: a stack of one."""
    return stack_iteration(RunsModule([module]), [batches])


def stack_iteration(stack: RunsModule, batches: Sequence[Sequence[Batch]]) -> Callable[[], None]:
    """One stacked iteration per call (every run's step: `RunsModule.iterate`, the update
    included); `batches[r]` are run r's batches, cycled."""
    optimizer = stack.configure_optimizers()
    source: Iterator[Batch] = cycle([stacked(step) for step in zip(*batches, strict=True)])
    step = 0

    def run() -> None:
        nonlocal step
        step += 1
        stack.iterate(optimizer, next(source), step)

    return run


def logic_part(module: DFLRun, batch: Batch) -> Callable[[], None]:
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


def evaluation(module: DFLRun, data: MnistDataModule) -> Callable[[], None]:
    """One evaluation on the test set as the module runs it every `eval_every` steps."""
    batches = data.test_batches(module.device)
    return lambda: module.evaluate(batches)


def bare_cnn(batch: Batch, net: torch.nn.Module | None = None) -> Callable[[], None]:
    """The floor: a plain PyTorch step of a digit network (the paper's CNN, `MnistNet`,
    channels_last, dropout, when None) on the labeled + unlabeled images of `batch` (2 x 64 =
    128), cross-entropy on all of them, backward, torch.optim.Adam with its defaults (lr 1e-3):
    no NTN, no logic, no Lightning; its dropout drawn from a generator of its own."""
    (x_l, y_l), (x_u, y_u) = batch["labeled"], batch["unlabeled"]
    x, y = torch.cat([x_l, x_u]), torch.cat([y_l, y_u])
    net = (net or MnistNet()).to(x.device).train()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    generator = torch.Generator(x.device).manual_seed(0)

    def run() -> None:
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(net(x, generator)[0], y).backward()
        optimizer.step()

    return run


def bare_network(module: DFLRun, batch: Batch) -> Callable[[], None]:
    """The floor with the pair heads: a plain PyTorch step of `module`'s network (the CNN and
    its knowledge base's NTN heads) on the 128 images, cross-entropy on all of them plus each
    head's BCE over all pairs of both batches against the true relation, backward,
    torch.optim.Adam with its defaults: what a step costs without logic, pair undersampling,
    the run's loss bookkeeping or Lightning."""
    (x_l, y_l), (x_u, y_u) = batch["labeled"], batch["unlabeled"]
    x, y = torch.cat([x_l, x_u]), torch.cat([y_l, y_u])
    n = len(x_l)
    net = module.net
    truths = {p: pair_truth(p, torch.stack([y_l, y_u])) for p in net.heads}
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

    def run() -> None:
        optimizer.zero_grad(set_to_none=True)
        logits, emb = net(x)
        pairs = net.pair_logits(torch.stack([emb[:n], emb[n:]]))
        loss = F.cross_entropy(logits, y)
        for p, z in pairs.items():
            loss = loss + F.binary_cross_entropy_with_logits(z, truths[p].to(z.dtype))
        loss.backward()
        optimizer.step()

    return run


def parts(module: DFLRun, batch: Batch) -> dict[str, Callable[[], None]]:
    """Where a training step's time goes: each part forward + backward on its own, from fixed
    inputs (`cnn`: the CNN on the images the step forwards; `ntn`: every head on all pairs of
    both batches; `pair_bce`: the undersampled pair loss; `dfl_loss`: the knowledge base's
    loss; `optimizer`: one optimizer step over all parameters)."""
    (x_l, y_l), (x_u, _) = batch["labeled"], batch["unlabeled"]
    x = torch.cat([x_l, x_u]) if module.kb is not None else x_l
    n = len(x_l)
    rng = module.generator()
    with torch.no_grad():
        logits, emb = module.net(x, rng)
        pairs = module.net.pair_logits(torch.stack([emb[:n], emb[n:]]) if module.kb else emb)
    truths = {p: pair_truth(p, y_l) for p in module.predicates}
    optimizer = module.optimizer.configure(module.parameters(), module.max_steps or 1)
    for w in module.parameters():
        w.grad = torch.zeros_like(w)

    def cnn() -> None:
        out, e = module.net(x, rng)
        (out.sum() + e.sum()).backward()

    def ntn() -> None:
        e = emb.detach().requires_grad_()
        both = torch.stack([e[:n], e[n:]]) if module.kb is not None else e
        sum(v.sum() for v in module.net.pair_logits(both).values()).backward()

    def pair_bce() -> None:
        z = {p: v.detach().requires_grad_() for p, v in pairs.items()}
        labeled = {p: v[0] if module.kb is not None else v for p, v in z.items()}
        sum(undersampled_bce(labeled[p], truths[p], rng) for p in module.predicates).backward()

    def dfl_loss() -> None:
        lg = logits[n:].detach().requires_grad_()
        pu = {p: v[1].detach().requires_grad_() for p, v in pairs.items()}
        module.kb(interpretation(lg, pu), module.ops).loss.backward()

    out = {"cnn": cnn, "ntn": ntn, "pair_bce": pair_bce, "dfl_loss": dfl_loss}
    if not module.predicates:
        out = {"cnn": cnn}
    elif module.kb is None:
        del out["dfl_loss"]
    return {**out, "optimizer": optimizer.step}
