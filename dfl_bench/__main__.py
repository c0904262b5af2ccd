"""`python -m dfl_bench`: the Hydra command line; `dfl_bench/lifecycle/train.py` says what a run
does, `dfl_bench/lifecycle/preflight.py` what is refused before Hydra starts (in about a second:
the trainer's libraries are imported only for a command line that composes)."""

import sys

# The working directory is off sys.path already (dfl_bench/__init__.py, imported first).
from dfl_bench.exits import EXIT_INVALID
from dfl_bench.lifecycle.preflight import defect

MODE_FLAGS = ("-m", "--multirun")  # Hydra's argparse takes no override after one of these


def flags_first(argv: list[str]) -> list[str]:
    """`argv` with the multirun flag before the overrides, wherever it was written: Hydra's
    parser reads overrides only before it (`+experiment=x -m profile=smoke` printed its usage).

    >>> flags_first(["+experiment=x", "-m", "profile=smoke"])
    ['-m', '+experiment=x', 'profile=smoke']
    """
    return [a for a in argv if a in MODE_FLAGS] + [a for a in argv if a not in MODE_FLAGS]


if __name__ == "__main__":
    sys.argv[1:] = flags_first(sys.argv[1:])
    why = defect(sys.argv[1:])
    if why is not None:
        print(f"[dfl_bench] invalid configuration: {why}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)
    from dfl_bench.paths import keep_library_caches_off_an_unwritable_home

    keep_library_caches_off_an_unwritable_home()
    from dfl_bench.lifecycle.train import main

    main()
