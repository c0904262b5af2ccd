"""`python -m dfl_bench`: the Hydra command line; `dfl_bench/lifecycle/train.py` says what a run
does, `dfl_bench/lifecycle/preflight.py` what is refused before Hydra starts."""

import sys

from dfl_bench.lifecycle.preflight import defect
from dfl_bench.lifecycle.train import EXIT_INVALID, main

if __name__ == "__main__":
    why = defect(sys.argv[1:])
    if why is not None:
        print(f"[dfl_bench] invalid configuration: {why}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)
    main()
