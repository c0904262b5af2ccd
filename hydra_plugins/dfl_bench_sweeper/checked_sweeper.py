"""`hydra/sweeper=checked` (conf/config.yaml's default): Hydra's basic sweeper that checks every
job of the sweep before the first is launched, with one composition per choice of config groups
(`dfl_bench.lifecycle.sweep.check_sweep`). The basic sweeper's own check composes each job in
full (about 0.4 s a job) before the launcher composes it again to run it; this one replaces it
and also runs each job's own checks (operator parameters, folders), listing every invalid job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper


class CheckedSweeper(BasicSweeper):
    """BasicSweeper whose jobs are all checked in `sweep`, before any batch is launched."""

    def sweep(self, arguments: list[str]) -> Any:
        from dfl_bench.lifecycle.slurm import quiet_sacct
        from dfl_bench.lifecycle.sweep import check_sweep

        assert self.config is not None
        check_sweep(arguments, self.params, self.config.hydra.overrides.hydra)
        quiet_sacct()  # a SLURM launcher's sacct failures: one line, not four a poll
        try:
            return super().sweep(arguments)
        finally:
            self._print_table()

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
