"""dfl_bench: benchmarking differentiable fuzzy-logic operators (van Krieken et al.).

Every `python -m dfl_bench...` and `python -m campaign...` entry point imports this package
first (campaign/__init__.py imports it before anything else): the working directory, which `-m`
and `-c` put first on sys.path, is taken off here, before any module imports the stack, so a
folder holding e.g. `pandas/`, `numpy/` or `torchvision/` runs nothing; PYTHONSAFEPATH keeps it
off the path of every interpreter the entry point starts (loky's `-c` workers, submitit, the
subprocesses of reproduce, seed_plan and commit_probe)."""

import os as _os
import sys as _sys

__version__ = "0.1.0"


def working_directory_off_the_path() -> None:
    """Take the working directory off the front of sys.path (where `python -m` and `-c` put it)
    and, by PYTHONSAFEPATH, off every child interpreter's, unless it is this project's own root
    (a checkout run from where it lies)."""
    own_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    cwd = _os.getcwd()
    if cwd == own_root:
        return
    _os.environ["PYTHONSAFEPATH"] = "1"  # Python >= 3.11: a child prepends no '' or cwd
    first = _sys.path[0] if _sys.path else None
    if first is not None and _os.path.abspath(first or _os.curdir) == cwd:
        del _sys.path[0]


def started_with_m_or_c() -> bool:
    """Whether this interpreter runs `python -m <module>` (runpy importing its package, argv[0]
    still `-m`, or the module running as `__main__`, which has a spec) or `python -c`: not a
    script, whose own folder is sys.path[0] (and may be the working directory)."""
    spec = getattr(_sys.modules.get("__main__"), "__spec__", None)
    return _sys.argv[:1] in (["-m"], ["-c"]) or getattr(spec, "name", "__main__") != "__main__"


if started_with_m_or_c():
    working_directory_off_the_path()
