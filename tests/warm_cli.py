"""`python -m dfl_bench ARGS` for the tests, run in a child forked from a server that has torch
and Lightning imported: the same entry point (`runpy`, as `-m` runs it), arguments, environment,
working folder, exit status, output and exit handlers as a fresh interpreter, without the ~8 s
of imports each fresh interpreter pays (most of a smoke run). The tests that are about the
process itself (signals from outside, a launcher and its workers: joblib's loky stalls under the
forkserver, `make reproduce-tables`) start real interpreters; the bit-exact paper-task numbers
run forked too: they come out the same to the bit."""

from __future__ import annotations

import atexit
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

PRELOAD = ["torch", "lightning"]  # imported once per test process; dfl_bench itself per run


@cache
def _context() -> multiprocessing.context.ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _exit_code(exit: SystemExit) -> int:
    """The status an interpreter exits with for `exit` (a message is printed, status 1)."""
    if exit.code is None or isinstance(exit.code, int):
        return exit.code or 0
    print(exit.code, file=sys.stderr)
    return 1


def _child(module: str, args: list[str], env: dict, cwd: str, out: str, err: str) -> None:
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, out), (2, err)):
        with open(path, "w") as file:
            os.dup2(file.fileno(), fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 (the process's own)
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit:
        code = _exit_code(exit)
    except BaseException:  # as the interpreter: the traceback, status 1
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()  # what an interpreter runs at its end (W&B, Hydra, loggers)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run(
    args: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 900,
    module: str = "dfl_bench",
) -> subprocess.CompletedProcess:
    """`python -m <module> ARGS` in `cwd` with `env`, as subprocess.run(capture_output=True,
    text=True) returns it."""
    with tempfile.TemporaryDirectory() as folder:
        out, err = Path(folder) / "out", Path(folder) / "err"
        process = _context().Process(
            target=_child, args=(module, list(args), dict(env), str(cwd), str(out), str(err))
        )
        process.start()
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired([module, *args], timeout)
        command = [sys.executable, "-m", module, *args]
        code = process.exitcode  # a signal's death: -signum, as subprocess says
        return subprocess.CompletedProcess(command, code, out.read_text(), err.read_text())
