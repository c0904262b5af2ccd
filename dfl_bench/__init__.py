"""dfl_bench: benchmarking differentiable fuzzy-logic operators (van Krieken et al.).

Every `python -m dfl_bench...` entry point (the training command line, `.results`, `.operators`,
`.theory`, ...) imports this package first, while `sys.argv[0]` is still `-m`: the working
directory, which `-m` puts first on sys.path, is taken off here, before any module imports the
stack, so a folder holding e.g. `pandas/`, `numpy/` or `torchvision/` runs nothing."""

import os as _os
import sys as _sys

__version__ = "0.1.0"


def working_directory_off_the_path() -> None:
    """Take the working directory off the front of sys.path (where `python -m` puts it) unless it
    is this project's own root (a checkout run from where it lies)."""
    own_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    first = _sys.path[0] if _sys.path else None
    if first is not None and _os.path.abspath(first or _os.curdir) == _os.getcwd() != own_root:
        del _sys.path[0]


if _sys.argv[:1] == ["-m"]:  # run as `python -m dfl_bench[.module]`, not imported by a script
    working_directory_off_the_path()
