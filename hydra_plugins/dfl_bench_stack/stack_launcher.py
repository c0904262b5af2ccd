"""`hydra/launcher=stack`: a dfl_bench sweep's runs trained as stacks in this process.

    python -m dfl_bench -m +experiment=same_symmetric seed=0,1,2,3 hydra/launcher=stack
    python -m dfl_bench -m seed=0,1,2,3 hydra/launcher=stack hydra.launcher.stack_size=4

Each job is set up as Hydra's basic launcher sets it up (its config composed, its output folder
and `.hydra/` files, its overrides and name); the jobs then train through
`dfl_bench.lifecycle.stack_sweep.run_sweep` (runs that can share a model in stacks of at most
`stack_size`), and each JobReturn carries its run's test accuracy, or fails as the separate job
would (Hydra then exits 1 after the sweep). It runs dfl_bench's task only.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from hydra.core.utils import JobReturn, JobStatus, configure_log, run_job, setup_globals
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, open_dict

from dfl_bench.schema import TEST_ACCURACY

log = logging.getLogger(__name__)


def _set_up(cfg: DictConfig) -> None:
    """The task run in Hydra's job setup: nothing (stacks train once every job is set up)."""


class StackLauncher(Launcher):
    """Launch a sweep's jobs as stacked runs of at most `stack_size` (dfl_bench only)."""

    def __init__(self, stack_size: int = 16) -> None:
        super().__init__()
        whole = isinstance(stack_size, int) and not isinstance(stack_size, bool)
        if not whole or stack_size < 1:  # invalid input: exit 2 before any job, as the task's
            print(
                "[dfl_bench] invalid configuration: hydra.launcher.stack_size must be an integer "
                f">= 1, got {stack_size!r}",
                file=sys.stderr,
            )
            raise SystemExit(2)
        self.stack_size = int(stack_size)
        self.config: DictConfig | None = None
        self.hydra_context: HydraContext | None = None
        self.task_function: TaskFunction | None = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.config, self.hydra_context, self.task_function = config, hydra_context, task_function

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        from dfl_bench.lifecycle.stack_sweep import Job, run_sweep
        from dfl_bench.lifecycle.train import JobFailed

        setup_globals()
        assert self.config is not None and self.hydra_context is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        log.info(f"Launching {len(job_overrides)} jobs as stacks of <= {self.stack_size}")
        returns = []
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            sweep_config = self.hydra_context.config_loader.load_sweep_config(
                self.config, list(overrides)
            )
            with open_dict(sweep_config):
                sweep_config.hydra.job.id = sweep_config.hydra.job.num = idx
            returns.append(
                run_job(
                    hydra_context=self.hydra_context,
                    task_function=_set_up,
                    config=sweep_config,
                    job_dir_key="hydra.sweep.dir",
                    job_subdir_key="hydra.sweep.subdir",
                )
            )
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        jobs = [Job(ret.cfg, ret.hydra_cfg.hydra) for ret in returns]
        run_sweep(jobs, self.stack_size)
        for ret, job in zip(returns, jobs, strict=True):
            if job.error is None:
                ret.status, ret.return_value = JobStatus.COMPLETED, job.record.get(TEST_ACCURACY)
            else:
                ret.status, ret.return_value = JobStatus.FAILED, JobFailed(job.error)
        return returns
