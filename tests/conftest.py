"""Shared test setup."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
import torch
from hypothesis import settings

from dfl_bench import untrusted

# CI runs the property tests on a fixed sequence of examples (a red CI is then reproducible);
# local runs explore new examples each time and keep the failures in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """Tiny models: one torch thread is faster, and immune to oversubscribed cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def keep_torch_threads():
    """In-process runs set torch's thread count; restore it for the other tests."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Under xdist, give every worker its share of the end-to-end (`slow`) tests at the front of
    its queue: xdist hands out contiguous chunks and balances by stealing from a queue's tail, so
    with the long tests first the run ends on short ones instead of waiting for one long test
    that started last. A file's slow tests stay on one worker (its module fixtures run once).
    Without workers the order stays as collected."""
    workers = getattr(config, "workerinput", {}).get("workercount", 0)
    if workers < 2:
        return
    by_file: dict[object, list] = {}
    fast = []
    for item in items:
        if item.get_closest_marker("slow"):
            by_file.setdefault(item.path, []).append(item)
        else:
            fast.append(item)
    queues: list[list] = [[] for _ in range(workers)]
    for group in sorted(by_file.values(), key=len, reverse=True):
        min(queues, key=len).extend(group)
    sizes = [len(items) // workers + (w < len(items) % workers) for w in range(workers)]
    sizes.reverse()  # xdist's first chunk is len // workers, the larger ones come last
    for queue, size in zip(queues, sizes, strict=True):
        take = max(0, size - len(queue))
        queue.extend(fast[:take])
        del fast[:take]
    queues[-1].extend(fast)
    items[:] = [item for queue in queues for item in queue]


@pytest.fixture
def refuse_temporary(monkeypatch):
    """`refuse_temporary(n)`: from the n-th on (1: each), a writer's temporary cannot be made
    (PermissionError at its creation, as in a read-only folder); the file itself is never
    opened."""
    made = untrusted._open

    def refuse(nth: int = 1) -> None:
        count = [0]

        def refused(path: Path, flags: int, within: int | None = None) -> int:
            count[0] += path.name.endswith(".tmp")  # the writer's temporaries, in order
            if path.name.endswith(".tmp") and count[0] >= nth:
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return made(path, flags, within)

        monkeypatch.setattr(untrusted, "_open", refused)

    return refuse
