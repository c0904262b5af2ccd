"""The paper task's data for R >= 1 runs: MNIST loaded once, each run its own 1% split and its own
resumable TrainStream (its seed), advanced in lockstep, so each run sees the batches it would see
alone (one run: R = 1)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import lightning as L
import torch
from torch import Tensor

from dfl_bench.tasks.contract import Lockstep
from dfl_bench.tasks.mnist.mnist_data import MnistDataModule, TrainStream, split_labeled

Batch = dict[str, tuple[Tensor, Tensor]]


class StackStream(Lockstep):
    """The runs' TrainStreams in lockstep (`Lockstep`: length, every run's stream state): each
    item is one step's batches of all runs, (R, n, ...) (run r's are what its TrainStream yields
    alone), gathered at once from the shared images.

    Every run has the same pool sizes (shared data settings), so the streams' epochs coincide."""

    def __iter__(self) -> Iterator[Batch]:
        x, y = self.streams[0].x, self.streams[0].y
        for step in zip(*(s.indices() for s in self.streams), strict=True):
            li, ui = (torch.stack(idx) for idx in zip(*step, strict=True))
            yield {"labeled": (x[li], y[li]), "unlabeled": (x[ui], y[ui])}


class StackDataModule(L.LightningDataModule):
    """One MnistDataModule's images for R runs that differ only in `seed` and `split_seed`."""

    def __init__(self, data: Mapping[str, Any], seeds: Sequence[int], split_seeds: Sequence[int]):
        super().__init__()
        if len(seeds) != len(split_seeds) or not seeds:
            raise ValueError("a stack needs one seed and one split seed per run")
        settings = {k: v for k, v in data.items() if k != "split_seed"}
        self.shared = MnistDataModule(**settings, seed=seeds[0], split_seed=split_seeds[0])
        self.seeds, self.split_seeds = list(seeds), list(split_seeds)

    def setup(self, stage: str | None = None) -> None:
        """Load MNIST once; draw each run's labeled split from its split seed."""
        self.shared.setup(stage)
        n_train, fraction = len(self.shared.train_x), self.shared.labeled_fraction
        self.splits = [split_labeled(n_train, fraction, s) for s in self.split_seeds]

    @property
    def arrays(self) -> Any:
        """The loaded MNIST arrays (None before setup)."""
        return self.shared.arrays

    @property
    def checksum(self) -> str:
        """Checksum of the MNIST arrays loaded (the same for every run)."""
        return self.shared.checksum

    def train_dataloader(self) -> StackStream:
        """Each run's stream over its own split, ordered by its own seed, on the training device."""
        trainer = getattr(self, "trainer", None)
        device = trainer.strategy.root_device if trainer is not None else torch.device("cpu")
        x, y = self.shared.train_x.to(device), self.shared.train_y.to(device)
        batch = self.shared.batch_size
        return StackStream(
            [
                TrainStream(x, y, labeled, unlabeled, batch, seed)
                for (labeled, unlabeled), seed in zip(self.splits, self.seeds, strict=True)
            ]
        )

    def test_batches(
        self, device: torch.device | str = "cpu"
    ) -> list[tuple[Tensor, Tensor]] | dict[str, list[tuple[Tensor, Tensor]]]:
        """The test set (and the held-out images under `validation`; the same for every run), as
        MnistDataModule.test_batches."""
        return self.shared.test_batches(device)
