"""Read an offline W&B run back: the records of its run-*.wandb (a LevelDB-format log)."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

BLOCK, HEADER = 32768, 7


def _records(run_dir: Path, kind: str) -> Iterator[Any]:
    """The `kind` records ('history', 'summary', ...) of the run in `run_dir`, in order."""
    from wandb.proto import wandb_internal_pb2

    raw = next(run_dir.glob("run-*.wandb")).read_bytes()
    assert raw[:4] == b":W&B"
    pos, chunk = 7, b""
    while pos + HEADER <= len(raw):
        if BLOCK - pos % BLOCK < HEADER:
            pos += BLOCK - pos % BLOCK
            continue
        _, length, part = struct.unpack("<IHB", raw[pos : pos + HEADER])
        chunk, pos = chunk + raw[pos + HEADER : pos + HEADER + length], pos + HEADER + length
        if part in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(chunk)
            if record.WhichOneof("record_type") == kind:
                yield getattr(record, kind)
            chunk = b""


def _items(items) -> dict[str, Any]:
    """Metric name ('test/accuracy' is stored as a nested key) -> decoded value."""
    return {(i.key or "/".join(i.nested_key)): json.loads(i.value_json) for i in items}


def history(run_dir: Path) -> list[dict[str, Any]]:
    """The history rows of the run."""
    return [_items(h.item) for h in _records(run_dir, "history")]


def summary(run_dir: Path, wait_for: Iterable[str] = (), timeout: float = 30.0) -> dict[str, Any]:
    """The run's final summary (every summary update, later ones winning); with `wait_for`, read
    again until it holds those keys (W&B's writer process may still be flushing the log after
    `finish` returns on a loaded machine) or `timeout` seconds pass."""
    keys, deadline = set(wait_for), time.monotonic() + timeout
    while True:
        out: dict[str, Any] = {}
        for update in _records(run_dir, "summary"):
            out.update(_items(update.update))
        if keys <= out.keys() or time.monotonic() > deadline:
            return out
        time.sleep(0.2)
