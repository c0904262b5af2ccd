"""Where a run's numbers come from beyond its configuration: the machine it trained on and the
commit of its code (both written into its record)."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def machine(cuda: bool = False) -> dict[str, str | None]:
    """What a run's numbers depend on beyond its configuration and commit: the torch build, the
    CPU (a long run retrains to its record's numbers on the same kind of machine only) and the
    GPU it trained on."""
    import torch

    return {
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu": cpu_model(),
        "platform": platform.machine(),
        "gpu": torch.cuda.get_device_name() if cuda else None,
    }


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit(repo: str | Path) -> str | None:
    """`$DFL_BENCH_GIT_COMMIT` when set (a copy of the tree sent to a GPU machine, whose git
    state may be another commit's), else HEAD of the checkout at `repo` ('-dirty' if tracked
    files changed); None outside git."""
    if os.environ.get("DFL_BENCH_GIT_COMMIT"):  # the sender's commit wins over a stale copy
        return os.environ["DFL_BENCH_GIT_COMMIT"]
    try:
        head = git(repo, "rev-parse", "HEAD")
        dirty = git(repo, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


def git(repo: str | Path, *args: str) -> str:
    """Output of one git command run in `repo`."""
    out = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=30
    )
    return out.stdout.strip()
