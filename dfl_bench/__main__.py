"""`python -m dfl_bench`: the Hydra command line; `dfl_bench/lifecycle/train.py` says what a run
does, `dfl_bench/lifecycle/preflight.py` what is refused before Hydra starts (in about a second:
the trainer's libraries are imported only for a command line that composes)."""

import os
import sys


def working_directory_off_the_path() -> None:
    """`python -m` puts the working directory first on sys.path, so a folder holding e.g.
    `torchvision/` or `omegaconf/` would run that code when the stack imports it: it is taken
    off unless it is this project's own root (a checkout run from where it lies)."""
    own_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    first = sys.path[0] if sys.path else None
    if first is not None and os.path.abspath(first or os.curdir) == os.getcwd() != own_root:
        del sys.path[0]


working_directory_off_the_path()

from dfl_bench.exits import EXIT_INVALID  # noqa: E402  (after the path is safe)
from dfl_bench.lifecycle.preflight import defect  # noqa: E402

if __name__ == "__main__":
    why = defect(sys.argv[1:])
    if why is not None:
        print(f"[dfl_bench] invalid configuration: {why}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)
    from dfl_bench.paths import keep_library_caches_off_an_unwritable_home

    keep_library_caches_off_an_unwritable_home()
    from dfl_bench.lifecycle.train import main

    main()
