"""`python -m dfl_bench`: the Hydra command line; `dfl_bench/lifecycle/train.py` says what a run
does, `dfl_bench/lifecycle/preflight.py` what is refused before Hydra starts (in about a second:
the trainer's libraries are imported only for a command line that composes)."""

import sys

from dfl_bench.exits import EXIT_INVALID
from dfl_bench.lifecycle.preflight import defect

if __name__ == "__main__":
    why = defect(sys.argv[1:])
    if why is not None:
        print(f"[dfl_bench] invalid configuration: {why}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)
    from dfl_bench.paths import keep_library_caches_off_an_unwritable_home

    keep_library_caches_off_an_unwritable_home()
    from dfl_bench.lifecycle.train import main

    main()
