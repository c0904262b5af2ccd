"""Living with a SLURM cluster's accounting being off (`sacct` missing or failing): submitit's
launcher (`hydra/launcher=slurm`) asks sacct for its jobs' states at every poll and, when it
fails, prints sacct's error and a warning each time (about 4 lines every few seconds, for the
whole sweep). `quiet_sacct` says it once, in one line, and stops asking: the jobs' ends are then
read from their result files, as submitit does whenever sacct has no answer."""

from __future__ import annotations

import subprocess
import sys
import time

from dfl_bench.lifecycle.private_api import watcher_delay


def quiet_sacct() -> bool:
    """Let SLURM jobs ask sacct through `QuietSacct` (once per process); False without submitit."""
    try:
        from submitit.slurm import slurm
    except ImportError:
        return False
    if not isinstance(slurm.SlurmJob.watcher, _quiet_class()):
        slurm.SlurmJob.watcher = _quiet_class()(delay_s=watcher_delay(slurm.SlurmJob.watcher))
    return True


def _quiet_class() -> type:
    """QuietSacct, defined on first use (it subclasses submitit's watcher)."""
    global _QUIET
    if _QUIET is None:
        from submitit.slurm.slurm import SlurmInfoWatcher

        class QuietSacct(SlurmInfoWatcher):
            """submitit's SLURM watcher that runs sacct with its errors captured and, at its
            first failure, says so in one line and asks it no more."""

            failed: str | None = None

            def update(self) -> None:
                command = None if self.failed else self._make_command()
                if command is None:
                    self._last_status_check = time.time()
                    return
                self._num_calls += 1
                try:
                    done = subprocess.run(command, capture_output=True, check=False)
                    why = done.stderr.decode(errors="replace").strip() if done.returncode else None
                except OSError as err:
                    done, why = None, str(err)
                if why is not None or done is None:
                    self.failed = (why or "no output").splitlines()[0]
                    print(
                        f"[dfl_bench] sacct gives no job states here ({self.failed}): the sweep "
                        "reads each job's end from its result file and asks sacct no more",
                        file=sys.stderr,
                        flush=True,
                    )
                    self._last_status_check = time.time()
                    return
                self._output = done.stdout
                self._info_dict.update(self.read_info(done.stdout))
                self._last_status_check = time.time()
                for job_id in self._registered - self._finished:
                    if self.is_done(job_id, mode="cache"):
                        self._finished.add(job_id)

        _QUIET = QuietSacct
    return _QUIET


_QUIET: type | None = None
