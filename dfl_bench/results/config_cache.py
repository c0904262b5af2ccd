"""Composed configs kept on disk: Hydra takes about a second per experiment to compose and
planning every table resolves some 400 jobs, yet what they give depends only on conf/ and this
package's code. So a planned experiment's jobs and a cell's config are kept under `configs/` of
the cache folder (paths.cache_root: `$DFL_BENCH_CACHE`, default ~/.cache/dfl_bench) in a folder
named by the fingerprint of those files, and read back while none of them changes and no
other user could have written them (cache_place.own_folder; else composed, nothing kept);
DFL_BENCH_CACHE=off composes every time. The fingerprint is taken when this module is imported
(with the code that composes) and a value is kept only while the files still match it: a file
edited while a process runs would otherwise file that process's old answers under the new code.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import hydra
import omegaconf

from dfl_bench.cache_place import keep, own_folder
from dfl_bench.paths import CONFIG_DIR, cache_root
from dfl_bench.untrusted import NotOwn, UntrustedFile, read_json

PACKAGE = Path(__file__).resolve().parents[1]
T = TypeVar("T")


# The package's folders whose code composes no config (what renders, times or derives
# theory); every other module counts (reproduction/ too), results/cell_configs.py and this one
# included.
NOT_COMPOSING = ("bench", "theory")
COMPOSING_RESULTS = ("cell_configs.py", "config_cache.py")


def composes(relative: Path) -> bool:
    """Whether the package module at `relative` may change a composed config."""
    top = relative.parts[0]
    if top == "results":
        return relative.name in COMPOSING_RESULTS
    return top not in NOT_COMPOSING


@cache
def fingerprint() -> str:
    """`files_fingerprint()` as this process's code was loaded (taken once)."""
    return files_fingerprint()


def files_fingerprint() -> str:
    """sha256 over every file a composed config depends on: conf/**/*.yaml, the package's
    Python but what only renders, times or derives theory (the registry fills operators'
    defaults) and the Hydra and OmegaConf versions."""
    digest = hashlib.sha256(f"{hydra.__version__} {omegaconf.__version__}".encode())
    files = [(Path(CONFIG_DIR), p) for p in sorted(Path(CONFIG_DIR).rglob("*.yaml"))]
    files += [
        (PACKAGE, p) for p in sorted(PACKAGE.rglob("*.py")) if composes(p.relative_to(PACKAGE))
    ]
    for root, path in files:
        digest.update(f"{path.relative_to(root).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def folder() -> Path | None:
    """Where this code's configs are kept, or None when caching is off."""
    root = cache_root()
    return None if root is None else root / "configs" / fingerprint()


def cached(kind: str, key: Any, compute: Callable[[], T], check: Callable = lambda v: v) -> T:
    """`compute()`'s JSON value for `key` (a JSON value) of `kind`: the cache's where it is this
    user's own (`own_folder`) and `check` passes it (a ValueError else), else computed and kept."""
    place = folder()
    if place is None:
        return compute()
    name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    path = place / kind / f"{name}.json"
    try:
        with own_folder(path.parent, place.parents[1]) as at:
            return check(read_json(path, expect=object, within=at))
    except (OSError, ValueError) as err:  # none there, no JSON `check` passes, or NotOwn
        mine = not isinstance(err, NotOwn)  # another user could have written it: nothing kept
    value = compute()
    if mine and files_fingerprint() == place.name:  # kept while conf/ and the code are as loaded
        with contextlib.suppress(OSError, UntrustedFile):  # and only where it can be
            keep(path, json.dumps(value, sort_keys=True), place.parents[1])
    return value


fingerprint()  # now, beside the code that composes, not at the first value kept
