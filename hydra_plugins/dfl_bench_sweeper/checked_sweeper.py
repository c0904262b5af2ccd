"""`hydra/sweeper=checked` (conf/config.yaml's default): Hydra's basic sweeper that checks every
job of the sweep before the first is launched, with one composition per choice of config groups
(`dfl_bench.lifecycle.sweep.check_sweep`). The basic sweeper's own check composes each job in
full (about 0.4 s a job) before the launcher composes it again to run it; this one replaces it
and also runs each job's own checks (operator parameters, folders), listing every invalid job.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.utils import JobReturn, JobStatus
from omegaconf import OmegaConf

from dfl_bench.lifecycle.private_api import basic_sweeper


class CheckedSweeper(basic_sweeper()):  # type: ignore[misc]
    """BasicSweeper whose jobs are all checked in `sweep`, before any batch is launched."""

    def sweep(self, arguments: list[str]) -> Any:
        from dfl_bench.lifecycle.slurm import quiet_sacct
        from dfl_bench.lifecycle.sweep import check_sweep

        assert self.config is not None
        check_sweep(arguments, self.params, self.config.hydra.overrides.hydra)
        quiet_sacct()  # a SLURM launcher's sacct failures: one line, not four a poll
        try:
            returns = self._launch_all(arguments)
        finally:
            self._print_table()
        self._end(returns)
        return returns

    def _launch_all(self, arguments: list[str]) -> list[Sequence[JobReturn]]:
        """Every batch of the sweep, whatever failed in an earlier one (BasicSweeper.sweep stops
        at the first failed job's batch)."""
        assert self.config is not None and self.hydra_context is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        overrides = parser.parse_overrides([*self._parse_config(), *arguments])
        self.overrides = self.split_arguments(overrides, self.max_batch_size)
        sweep_dir = Path(self.config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
        returns, first = [], 0
        while not self.is_done():
            batch = self.get_job_batch()
            returns.append(self.launcher.launch(batch, initial_job_idx=first))
            first += len(batch)
        return returns

    @staticmethod
    def _end(returns: Sequence[Sequence[JobReturn]]) -> None:
        """A failed job (JobFailed: its record says why) is one line and the sweep exits 1 after
        its table; any other error of a job is raised as Hydra would."""
        from dfl_bench.exits import EXIT_FAILED
        from dfl_bench.lifecycle.train import JobFailed

        jobs = [r for batch in returns for r in batch]
        failed = [r for r in jobs if r.status != JobStatus.COMPLETED]
        for r in failed:
            if not isinstance(r._return_value, JobFailed):
                _ = r.return_value  # an unexpected error: Hydra's report, with its traceback
        for r in failed:
            print(r._return_value, file=sys.stderr)
        if failed:
            print(
                f"[dfl_bench] {len(failed)} of {len(jobs)} jobs failed (each record says why); "
                "rerunning the command retrains only those",
                file=sys.stderr,
            )
            raise SystemExit(EXIT_FAILED)

    def _print_table(self) -> None:
        """The sweep's table from the records there are (dfl_bench.results.sweep_table): its rows
        and those recorded before, beside the paper's numbers; a render that fails says so in one
        line and never changes the sweep's outcome."""
        from hydra.utils import to_absolute_path

        from dfl_bench.results.sweep_table import sweep_table

        config = self.config
        try:
            records_dir = config.records_dir
            print(sweep_table(to_absolute_path(records_dir) if records_dir else "",
                              str(config.experiment_name), str(config.profile.name)),
                  flush=True)  # fmt: skip
        except Exception as err:  # a table is a courtesy: the records are what counts
            print(f"[dfl_bench] no table at the sweep's end ({type(err).__name__}: {err})")

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Nothing: `sweep` checked every job of every batch before the first."""
