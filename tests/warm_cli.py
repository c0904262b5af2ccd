"""`python -m dfl_bench ARGS` for the tests, run in a child forked from a server that has torch
and Lightning imported: the same entry point (`runpy`, as `-m` runs it), arguments, environment,
working folder, exit status, output and exit handlers as a fresh interpreter, without the ~8 s
of imports each fresh interpreter pays (most of a smoke run). `run` is subprocess.run's share;
`popen` stands in for subprocess.Popen where the reproduction starts its multiruns. The tests
that are about the process itself (signals from outside, a launcher and its workers: joblib's
loky stalls under the forkserver) start real interpreters; the bit-exact paper-task numbers run
forked too: they come out the same to the bit."""

from __future__ import annotations

import atexit
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from multiprocessing.connection import Connection
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


def _child(
    module: str,
    args: list[str],
    env: dict,
    cwd: str,
    out: str | Connection,
    err: str | Connection,
    session: bool = False,
) -> None:
    """The forked interpreter: `out` and `err` are file paths or the write end of a pipe (the
    same one for both: stderr into stdout); `session`: a process group of its own."""
    if session:
        os.setsid()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    # sys.path as `python -m` starts it: the working folder, then PYTHONPATH, then the rest
    front = [cwd, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    sys.path[:] = [*front, *(entry for entry in sys.path if entry not in front)]
    for fd, target in ((1, out), (2, err)):
        if isinstance(target, str):
            with open(target, "w") as file:
                os.dup2(file.fileno(), fd)
        else:
            os.dup2(target.fileno(), fd)
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


class Started:
    """What `subprocess.Popen([python, "-m", module, *args], stdout=PIPE, stderr=STDOUT,
    text=True)` gives its caller (`stdout` to read lines from, `pid`, `poll`, `wait`,
    `returncode`), for a child forked as `run` forks it; `session`: start_new_session."""

    def __init__(self, module: str, args: Sequence[str], env: Mapping[str, str], session: bool):
        self.args = [sys.executable, "-m", module, *args]
        reader, writer = _context().Pipe(duplex=False)
        self._process = _context().Process(
            target=_child,
            args=(module, list(args), dict(env), os.getcwd(), writer, writer, session),
        )
        self._process.start()
        writer.close()  # the child's copy is the only writer: its exit ends the output
        self.stdout = open(os.dup(reader.fileno()))  # noqa: SIM115 (closed by its reader)
        reader.close()
        self.pid = self._process.pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and not self._process.is_alive():
            self.returncode = self._process.exitcode  # a signal's death: -signum
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self.poll() is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode


def popen(real: Callable[..., subprocess.Popen]) -> Callable[..., object]:
    """subprocess.Popen that forks `python -m dfl_bench...` commands whose stderr goes into a
    piped stdout (as the reproduction starts its multiruns); any other call goes to `real`."""

    def start(command, *args, **kwargs):
        forked = (
            not args
            and list(command[:2]) == [sys.executable, "-m"]
            and command[2].startswith("dfl_bench")
            and kwargs.get("stdout") == subprocess.PIPE
            and kwargs.get("stderr") == subprocess.STDOUT
            and kwargs.get("text")
            and kwargs.get("cwd") is None
            and kwargs.get("env") is None
        )
        if not forked:
            return real(command, *args, **kwargs)
        session = kwargs.get("start_new_session", False)
        return Started(command[2], command[3:], os.environ, session)

    return start
