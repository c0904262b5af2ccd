"""What the committed commit probes say (results/commit_probes*.json, one file per machine):
whether the commits of a cell's runs train it alike, to the bit (`python -m campaign.commit_probe`
makes them; the tables read them here), and whether git shows their training code changed."""

from __future__ import annotations

import subprocess
import warnings
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from dfl_bench.untrusted import read_json

PROBES = "results/commit_probes.json"  # the first machine's, before a file named its machine
PROBE_FILES = "results/commit_probes*.json"  # every machine's (commit_probe.machine_file)
PROBE_STEPS = 100
TRAINING_CODE = ("dfl_bench", "conf", ":(exclude)dfl_bench/results")


def same(commits: Mapping[str, Mapping[str, Any]]) -> bool | None:
    """Whether every commit's probe gave the same numbers; None while one has none."""
    numbers = [entry.get("numbers") for entry in commits.values()]
    if len(numbers) < 2 or any(n is None for n in numbers):
        return None
    return all(n == numbers[0] for n in numbers[1:])


class ProbeWarning(UserWarning):
    """A committed probe file that cannot be read as one."""


def well_shaped(cells: Any) -> bool:
    """Whether a probe file's `cells` map configurations to {"commits": {commit: its probe}}."""
    return isinstance(cells, dict) and all(
        isinstance(cell, dict)
        and isinstance(cell.get("commits", {}), dict)
        and all(isinstance(e, dict) for e in cell.get("commits", {}).values())
        for cell in cells.values()
    )


def cells_of(path: Path) -> dict[str, dict[str, Any]]:
    """A probe file's cells, read as a file from others: one that is no such mapping
    (`well_shaped`) is skipped with a warning naming what is wrong (the tables render without
    it)."""
    try:
        cells = read_json(path).get("cells", {})
    except (OSError, ValueError) as err:
        why = str(err)
    else:
        if well_shaped(cells):
            return cells
        why = f"{path}: its cells are no mapping of configurations to their commits' probes"
    warnings.warn(f"{why}; the probe file is skipped", ProbeWarning, stacklevel=2)
    return {}


@cache
def probed(repo: Path) -> list[dict[str, dict[str, Any]]]:
    """The committed probes, one mapping (configuration -> its commits' probes and `same`) per
    machine's file (`results/commit_probes_<model>_<capability>.json`, and the older `PROBES`
    and `results/commit_probes_avx2.json`); [] without."""
    return [cells_of(path) for path in sorted(repo.glob(PROBE_FILES))]


def verdict(repo: Path, configuration: str | None, commits: Sequence[str]) -> bool | None:
    """Whether `commits` train `configuration` alike by the committed probes of one machine
    (every commit probed in one file: probes compare to the bit only there): True (same numbers
    at every one), False (they differ), None (no file probed them all)."""
    found = None
    for cells in probed(repo):
        entries = cells.get(configuration or "", {}).get("commits", {})
        if all(c in entries for c in commits):
            alike = same({c: entries[c] for c in commits})
            if alike is False:
                return False
            found = alike if found is None else found
    return found


def deciding_files(repo: Path, configuration: str | None, commits: Sequence[str]) -> list[str]:
    """The committed probe files (relative to `repo`) that probed every one of `commits` for
    `configuration` and found them alike."""
    out = []
    for path in sorted(repo.glob(PROBE_FILES)):
        entries = cells_of(path).get(configuration or "", {}).get("commits", {})
        if commits and all(c in entries for c in commits):
            if same({c: entries[c] for c in commits}) is True:
                out.append(path.relative_to(repo).as_posix())
    return out


def training_code_changed(commits: tuple[str, ...], repo: Path) -> bool | None:
    """Whether the training code (dfl_bench/ but results/, conf/) differs between the commits;
    None when git cannot tell (unknown commit, no repository, dirty tree)."""
    clean = [c for c in commits if not c.endswith("-dirty")]
    if len(clean) < len(commits):
        return None
    try:
        for other in clean[1:]:
            out = subprocess.run(
                ["git", "diff", "--quiet", clean[0], other, "--", *TRAINING_CODE],
                cwd=repo, capture_output=True, timeout=30,
            )  # fmt: skip
            if out.returncode == 1:
                return True
            if out.returncode != 0:
                return None
    except (OSError, subprocess.SubprocessError):
        return None
    return False
