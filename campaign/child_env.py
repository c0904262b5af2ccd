"""The environment of a child process that runs a commit's or checkout's code:
what it needs to run and train alike, never the caller's tokens or other secrets."""

from __future__ import annotations

import os
from collections.abc import Sequence

# The path, home (the data cache under it), locale, temporary folder, the CPU kernels torch picks
# and the hash seed (both reach the numbers), the dfl_bench cache.
KEPT = (
    "PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TZ", "ATEN_CPU_CAPABILITY", "PYTHONHASHSEED",
    "DFL_BENCH_CACHE", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
)  # fmt: skip
KEPT_PREFIXES = ("LC_", "OMP_", "MKL_", "KMP_", "GOMP_", "OPENBLAS_")  # locale, thread settings


def child_env(pythonpath: Sequence[str], **settings: str) -> dict[str, str]:
    """The caller's KEPT and KEPT_PREFIXES variables, nothing else, with `pythonpath` as
    PYTHONPATH, PYTHONSAFEPATH (no working directory on the import path) and `settings`.

    >>> os.environ["SECRET"] = "hunter2"; env = child_env(["/c", "/d"], OMP_NUM_THREADS="1")
    >>> del os.environ["SECRET"]; "SECRET" in env, env["PYTHONPATH"], env["OMP_NUM_THREADS"]
    (False, '/c:/d', '1')
    """
    kept = {k: v for k, v in os.environ.items() if k in KEPT or k.startswith(KEPT_PREFIXES)}
    return {**kept, "PYTHONPATH": os.pathsep.join(pythonpath), "PYTHONSAFEPATH": "1", **settings}
