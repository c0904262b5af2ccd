"""The semi-supervised MNIST split of Section 9.3: normalized tensors, the 1% labeled split, the
resumable training stream and the Lightning DataModule (sources and cache: mnist_sources.py).

Pixels become ``k / 255`` (the torchvision convention, which the normalization mean 0.1307 and
std 0.3081 were computed under).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import lightning as L
import numpy as np
import torch
from torch import Tensor

from dfl_bench.checks import fraction as check_fraction
from dfl_bench.tasks.mnist.mnist_sources import N_TEST, N_TRAIN, MnistArrays, load_mnist
from dfl_bench.tasks.values import labeled_count, training_split

MEAN, STD = 0.1307, 0.3081


def normalize(images: np.ndarray) -> Tensor:
    """uint8 (n, 28, 28) -> float32 (n, 1, 28, 28): k/255, standardized by MEAN and STD."""
    x = torch.from_numpy(np.ascontiguousarray(images)).to(torch.float32).div_(255.0)
    return x.sub_(MEAN).div_(STD).unsqueeze(1)


def split_labeled(n: int, fraction: float, seed: int) -> tuple[Tensor, Tensor]:
    """Indices of the labeled (fraction of n, >= 1) and unlabeled examples, drawn by `seed`."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"labeled_fraction must lie in (0, 1), got {fraction}")
    n_labeled = labeled_count(n, fraction)
    if n_labeled >= n:
        raise ValueError(f"labeled_fraction {fraction} leaves no unlabeled data out of {n}")
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    return perm[:n_labeled].sort().values, perm[n_labeled:].sort().values


class Shuffled:
    """Endless index batches from a pool, reshuffled each pass, the last partial batch dropped."""

    def __init__(self, pool: Tensor, batch_size: int, generator: torch.Generator) -> None:
        self.pool, self.batch_size, self.generator = pool, min(batch_size, len(pool)), generator
        self.per_pass = len(pool) // self.batch_size
        self._order, self._next = pool, self.per_pass

    def __next__(self) -> Tensor:
        if self._next == self.per_pass:
            perm = torch.randperm(len(self.pool), generator=self.generator, device=self.pool.device)
            self._order = self.pool[perm]
            self._next = 0
        i, b = self._next, self.batch_size
        self._next += 1
        return self._order[i * b : (i + 1) * b]

    @property
    def left_in_pass(self) -> int:
        """Batches left in the current pass (a whole pass when none is under way)."""
        return self.per_pass - self._next or self.per_pass

    def state_dict(self) -> dict[str, Any]:
        """The current pass order and position (the generator is saved by the stream)."""
        return {"order": self._order.cpu(), "next": self._next}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue the pass saved by `state_dict`."""
        self._order, self._next = state["order"].to(self.pool.device), int(state["next"])


class TrainStream:
    """One epoch = the rest of a pass over the unlabeled pool; the labeled batches cycle
    independently. Resumable: `state_dict` holds the generator, pass orders and positions, so a
    resumed run (Lightning restores it from the checkpoint) sees the batches an uninterrupted
    one would.

    Yields ``{"labeled": (x, y), "unlabeled": (x, y)}``; the unlabeled y is for metrics only.
    """

    def __init__(
        self,
        x: Tensor,
        y: Tensor,
        labeled: Tensor,
        unlabeled: Tensor,
        batch_size: int,
        seed: int,
    ) -> None:
        self.x, self.y = x, y
        self._generator = torch.Generator(device=x.device).manual_seed(seed)  # no host copies
        self._labeled = Shuffled(labeled.to(x.device), batch_size, self._generator)
        self._unlabeled = Shuffled(unlabeled.to(x.device), batch_size, self._generator)

    def __len__(self) -> int:
        return self._unlabeled.per_pass

    def __iter__(self) -> Iterator[dict[str, tuple[Tensor, Tensor]]]:
        for li, ui in self.indices():
            yield {"labeled": (self.x[li], self.y[li]), "unlabeled": (self.x[ui], self.y[ui])}

    def indices(self) -> Iterator[tuple[Tensor, Tensor]]:
        """The rest of this epoch's (labeled, unlabeled) index batches into `x`."""
        for _ in range(self._unlabeled.left_in_pass):
            yield next(self._labeled), next(self._unlabeled)

    def state_dict(self) -> dict[str, Any]:
        """Everything that decides the next batches (Lightning saves it in the checkpoint)."""
        return {
            "generator": self._generator.get_state(),
            "labeled": self._labeled.state_dict(),
            "unlabeled": self._unlabeled.state_dict(),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue the stream where `state_dict` was taken."""
        self._generator.set_state(state["generator"])
        self._labeled.load_state_dict(state["labeled"])
        self._unlabeled.load_state_dict(state["unlabeled"])


class InMemoryData(L.LightningDataModule):
    """What a task's data module shares: MNIST in memory (`arrays`, its `checksum` for the
    record) and the training device its tensors move to once."""

    arrays: MnistArrays | None = None

    @property
    def checksum(self) -> str:
        """Checksum of the full MNIST arrays that were loaded (see MnistArrays.checksum)."""
        if self.arrays is None:
            raise RuntimeError("call setup() before asking for the checksum")
        return self.arrays.checksum

    def _device(self) -> torch.device:
        trainer = getattr(self, "trainer", None)
        return trainer.strategy.root_device if trainer is not None else torch.device("cpu")


class MnistDataModule(InMemoryData):
    """The semi-supervised MNIST split of Section 9.3 as in-memory tensors on the training device.

    `seed` orders the batches; `split_seed` (default: `seed`) picks the labeled images.
    `validation: f` holds out the last fraction f of the training images (after `subset_train`;
    at f = 1/6 MNIST's own 50k/10k split) from both pools and evaluates on them beside the test
    set: `test_batches` then gives {"test": ..., "validation": ...}.
    """

    def __init__(
        self,
        source: str = "auto",
        root: str | None = None,
        cache_dir: str | None = None,
        labeled_fraction: float = 0.01,
        batch_size: int = 64,
        seed: int = 0,
        split_seed: int | None = None,
        subset_train: int | None = None,
        subset_test: int | None = None,
        eval_batch_size: int = 2000,
        validation: float = 0.0,
    ) -> None:
        super().__init__()
        if batch_size < 1 or eval_batch_size < 1:
            raise ValueError("batch_size and eval_batch_size must be positive")
        check_fraction(validation, "data.validation")
        self.validation = validation
        self.source, self.root, self.cache_dir = source, root, cache_dir
        self.labeled_fraction, self.batch_size = labeled_fraction, batch_size
        self.seed = seed
        self.split_seed = seed if split_seed is None else split_seed
        self.subset_train, self.subset_test = subset_train, subset_test
        self.eval_batch_size = eval_batch_size
        self.arrays: MnistArrays | None = None

    def setup(self, stage: str | None = None) -> None:
        """Load MNIST once, take the subsets, normalize, and split off the labeled 1%."""
        if self.arrays is not None:
            return
        self.arrays = load_mnist(self.source, self.root, self.cache_dir)
        n_train = _subset_size(self.subset_train, N_TRAIN, "subset_train")
        n_test = _subset_size(self.subset_test, N_TEST, "subset_test")
        pool, _ = training_split(n_train, self.validation)  # the held-out images after pool
        self.train_x = normalize(self.arrays.train_x[:pool])
        self.train_y = torch.from_numpy(self.arrays.train_y[:pool].astype(np.int64))
        self.held_x = normalize(self.arrays.train_x[pool:n_train])
        self.held_y = torch.from_numpy(self.arrays.train_y[pool:n_train].astype(np.int64))
        self.test_x = normalize(self.arrays.test_x[:n_test])
        self.test_y = torch.from_numpy(self.arrays.test_y[:n_test].astype(np.int64))
        self.labeled_idx, self.unlabeled_idx = split_labeled(
            pool, self.labeled_fraction, self.split_seed
        )

    def train_dataloader(self) -> TrainStream:
        """The paired labeled/unlabeled stream, its tensors moved once to the training device."""
        device = self._device()
        return TrainStream(
            self.train_x.to(device),
            self.train_y.to(device),
            self.labeled_idx,
            self.unlabeled_idx,
            self.batch_size,
            self.seed,
        )

    def test_batches(
        self, device: torch.device | str = "cpu"
    ) -> list[tuple[Tensor, Tensor]] | dict[str, list[tuple[Tensor, Tensor]]]:
        """The test set in a few big batches on `device` (moved once, then cached); under
        `validation` a dict of the test and the held-out training images' batches."""
        device = torch.device(device)
        cached = getattr(self, "_test_cache", None)
        if cached is None or cached[0] != device:
            splits = {"test": (self.test_x, self.test_y)}
            if len(self.held_y):
                splits["validation"] = (self.held_x, self.held_y)
            batches = {
                name: list(
                    zip(
                        x.to(device).split(self.eval_batch_size),
                        y.to(device).split(self.eval_batch_size),
                        strict=True,
                    )
                )
                for name, (x, y) in splits.items()
            }
            self._test_cache = (device, batches if len(batches) > 1 else batches["test"])
        return self._test_cache[1]


def _subset_size(subset: int | None, full: int, name: str) -> int:
    """The number of images a subset option keeps (None = all)."""
    if subset is None:
        return full
    if not 1 <= subset <= full:
        raise ValueError(f"{name} must be in [1, {full}] or None, got {subset}")
    return int(subset)
