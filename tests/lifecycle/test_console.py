"""What a run prints: one progress bar over max_steps across passes over the data, and
Lightning's two known warnings silenced unless the user chose warning filters."""

from __future__ import annotations

import re
import sys
import warnings
from typing import Any

import lightning as L
import pytest
import torch
import torch.utils._pytree as pytree
from jobs import composed
from lightning.fabric.utilities.rank_zero import WarningCache
from lightning.pytorch.trainer.connectors import data_connector
from omegaconf import OmegaConf
from torch.utils.data import DataLoader, TensorDataset

from dfl_bench.lifecycle import console, trainer


class Tiny(L.LightningModule):
    """A linear model that, like RunsModule, overrides `transfer_batch_to_device`."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
        self.shown: dict[str, float] = {"test_acc": 0.5}  # as RunsModule keeps them

    def training_step(self, batch: list[torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = self.layer(batch[0]).pow(2).mean()
        self.shown["loss"] = float(loss)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def transfer_batch_to_device(
        self, batch: Any, device: torch.device, dataloader_idx: int
    ) -> Any:
        return batch


class ThreeBatches(L.LightningDataModule):
    """Three batches per pass: a 7-step run makes three passes (epochs)."""

    def train_dataloader(self) -> DataLoader:
        return DataLoader(TensorDataset(torch.randn(6, 2)), batch_size=2)


def fit(steps: int, *callbacks: L.Callback) -> L.Trainer:
    """Fit `Tiny` for `steps` steps with the given callbacks (progress bar on when one is)."""
    trainer = L.Trainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=bool(callbacks),
        callbacks=list(callbacks),
    )
    trainer.fit(Tiny(), datamodule=ThreeBatches())
    return trainer


def test_one_bar_counts_steps_across_passes(capsys):
    bar = console.StepProgressBar()
    trainer = fit(7, bar)
    assert trainer.current_epoch == 3  # the run crossed passes over the data
    assert (bar.train_progress_bar.total, bar.train_progress_bar.n) == (7, 7)
    shown = capsys.readouterr().out
    assert "7/7" in shown and "Epoch" not in shown
    assert "test_acc=50.0%" in shown and "loss=" in shown


def test_build_trainer_adds_the_bar_only_when_asked(tmp_path):
    on, _ = composed(tmp_path, "progress_bar=true")
    off, _ = composed(tmp_path, "progress_bar=false")
    assert isinstance(trainer.build_trainer(on, []).progress_bar_callback, console.ProgressBar)
    assert trainer.build_trainer(off, []).progress_bar_callback is None


def emitted(monkeypatch, quiet: bool) -> list[str]:
    """The messages of a fit with a DataModule, of torch's LeafSpec and of Lightning's check for
    `srun` on a host that has it, with or without `quiet_known_warnings` (Lightning warns once
    per process: its cache is emptied first)."""
    from lightning.fabric.plugins.environments import SLURMEnvironment

    monkeypatch.setattr(data_connector, "warning_cache", WarningCache())
    monkeypatch.setattr(
        "shutil.which", lambda name, *a, **k: "/usr/bin/srun" if name == "srun" else None
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if quiet:
            console.quiet_known_warnings()
        fit(1)
        pytree.LeafSpec()
        SLURMEnvironment._validate_srun_used()
    return [str(w.message) for w in caught]


def known(messages: list[str]) -> set[str]:
    """The patterns of `console.KNOWN_WARNINGS` that some of `messages` match."""
    return {p for p, _ in console.KNOWN_WARNINGS if any(re.search(p, m) for m in messages)}


ALL = {p for p, _ in console.KNOWN_WARNINGS}


def test_known_warnings_are_quiet(monkeypatch):
    assert known(emitted(monkeypatch, quiet=False)) == ALL
    assert known(emitted(monkeypatch, quiet=True)) == set()


@pytest.mark.parametrize("option", ["default", "always"])
def test_warning_options_show_them(monkeypatch, option):
    monkeypatch.setattr(sys, "warnoptions", [option])
    assert known(emitted(monkeypatch, quiet=True)) == ALL


def test_the_summary_line_shows_the_measures_its_task_declares(tmp_path):
    from dfl_bench.lifecycle.job import summary_text

    base = {"experiment": "e", "name": "n", "status": "ok", "reason": None, "steps": 10}
    base |= {"wall_time_s": 1.0, "test_accuracy": 0.5, "best_test_accuracy": 0.6}
    paper = summary_text(base | {"config": {}, "cons_ratio": 0.25, "cu_cons": None}, tmp_path)
    assert "cons 25.0%  cu_cons n/a  cu_ant n/a" in paper and "digit" not in paper
    addition = {"config": {"task": {"name": "mnist_addition"}}, "digit_accuracy": 0.99}
    text = summary_text(base | addition, tmp_path)
    assert "digit accuracy 99.0%" in text and "cons" not in text


def test_in_a_log_file_progress_is_a_line_every_few_percent(capsys):
    log = console.StepProgressLog(percent=25)
    fit(20, log)
    lines = capsys.readouterr().out.splitlines()
    steps = [line.split()[2] for line in lines if line.startswith("[dfl_bench] step ")]
    assert steps == ["5/20", "10/20", "15/20", "20/20"]
    assert all("\r" not in line for line in lines) and "test_acc 50.0%" in lines[-1]


def test_a_terminal_gets_the_bar_and_a_log_file_the_lines(monkeypatch):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert isinstance(console.progress(), console.StepProgressBar)
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert isinstance(console.progress(), console.StepProgressLog)


def test_help_names_the_documentation_and_lists_the_groups(tmp_path):
    _, hydra = composed(tmp_path)
    assert hydra.help.app_name == "dfl_bench"
    help_ = OmegaConf.to_container(hydra.help, resolve=False)
    assert "docs/training.md" in help_["header"] and "$APP_CONFIG_GROUPS" in help_["template"]


def test_a_real_runs_progress_lines_show_its_loss_and_test_accuracy(tmp_path):
    """The lines a log file gets (docs/training.md) carry the run's loss and test accuracy."""
    import os
    import subprocess
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "dfl_bench", "profile=smoke", "logger=none"]
    folders = [f"records_dir={tmp_path}", f"checkpoint_dir={tmp_path / 'ck'}"]
    done = subprocess.run(
        [*command, *folders, f"hydra.run.dir={tmp_path}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("[dfl_bench] step")]
    assert lines and re.search(r", loss \d+\.\d{3}, test_acc \d+\.\d%$", lines[-1]), done.stdout
