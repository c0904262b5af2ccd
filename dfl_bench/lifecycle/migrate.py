"""A record of an older form in today's: the steps from each form this framework has written to
the next, oldest first. The hash is over every setting a config spells
(lifecycle/hashing.hashed_config), so an older form is brought here, never hashed as if it were
today's. The framework reads older forms in two places: a harvest brings a frozen older
checkout's records in through `migrate_record` (reproduction/harvest.py), and the loader names
a record whose config `migrate_config` changes as one of an older form instead of counting it
(results/load.py). Rewriting a records folder in place, once, is this repository's
(campaign/migrate_records.py).

Each step is a pure function of a record's config (CONFIG_STEPS) or of the record (RECORD_STEPS)
that says what trained and what it measured, oldest first;
a record already in today's form is left as it is. Nothing is read as code: a record is JSON.
`python -m dfl_bench.lifecycle.migrate --help` says so (`main`) and touches nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dfl_bench.exits import EXIT_INVALID
from dfl_bench.kinds import KINDS
from dfl_bench.lifecycle.hashing import config_hash, digest, hashed_config, numbers_as_floats
from dfl_bench.schema import (
    BEST_TEST_ACCURACY,
    BEST_VALIDATION_ACCURACY,
    DIGIT_ACCURACY,
    TEST_ACCURACY,
    VALIDATION_ACCURACY,
)

# The `problem` group became `kb`, one flat node: (the old place, today's place) of each key.
PROBLEM_TO_KB: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("problem", "name"), ("kb", "name")),
    (("problem", "w_dfl"), ("kb", "w_dfl")),
    *((("problem", "kb", key), ("kb", key)) for key in ("formulas", "weights", "scale", "scope")),
)
YAGER = ("yager", "yager_r", "yager_s")  # the operators with an `eps` (operators/numerics)


def _dicts(value: Any) -> Any:
    """`value` with every mapping in it copied as a dict (the rest shared)."""
    if isinstance(value, Mapping):
        return {k: _dicts(v) for k, v in value.items()}
    return value


def _dotted(key: str) -> str:
    """A dotted config key (a provenance entry's, `problem.w_dfl`) in the `kb` group's names."""
    parts = tuple(key.split("."))
    for old, new in PROBLEM_TO_KB:
        if parts[: len(old)] == old:
            return ".".join((*new, *parts[len(old) :]))
    return key


def _moved(
    config: Mapping[str, Any], moves: Sequence[tuple[tuple[str, ...], tuple[str, ...]]]
) -> dict[str, Any]:
    """A copy of `config` with the value at each move's first path put at its second (a mapping
    left empty goes); a path that is absent moves nothing."""
    out = _dicts(config)
    for source, target in moves:
        *parents, key = source
        nodes = [out]
        for name in parents:
            nodes.append(nodes[-1].get(name) if isinstance(nodes[-1], dict) else None)
        if not isinstance(nodes[-1], dict) or key not in nodes[-1]:
            continue
        value = nodes[-1].pop(key)
        for parent, name in zip(reversed(nodes[:-1]), reversed(parents), strict=True):
            if parent[name] == {}:  # a mapping left empty goes
                del parent[name]
        node = out
        for name in target[:-1]:
            node = node.setdefault(name, {})
        node[target[-1]] = value
    return out


def kb_not_problem(config: dict[str, Any]) -> dict[str, Any]:
    """The old `problem` group's keys at their place in `kb` (and so named in the provenance)."""
    out = _moved(config, PROBLEM_TO_KB)
    if isinstance(out.get("provenance"), dict):
        out["provenance"] = {_dotted(k): v for k, v in out["provenance"].items()}
    return out


def added_keys(config: dict[str, Any]) -> dict[str, Any]:
    """Each key added to the configuration after records were made, where today's
    configuration has it, at the value that computes what those records computed: the paper's
    task and network, no augmentation, no NTN output bias, ADAM's fused kernel (once torch's
    default), MNIST addition in log space on the test split with the exact loss, the Yager
    operators' eps 0 (the paper's operator)."""
    out = _dicts(config)
    out.setdefault("task", {"name": "mnist_kb"})
    out.setdefault("net", {"name": "paper"})
    out.setdefault("augment", {"degrees": 0.0, "shift": 0.0})
    if isinstance(out.get("model"), dict):
        out["model"].setdefault("ntn_bias", False)
    if isinstance(out.get("optimizer"), dict) and out["optimizer"].get("name") == "adam":
        out["optimizer"].setdefault("fused", True)
    if out["task"].get("name") == "mnist_addition":
        for key, value in (("valuation", "log"), ("validation", 0.0), ("loss", "exact")):
            out["task"].setdefault(key, value)
    for kind in KINDS:
        if isinstance(out.get(kind), dict) and out[kind].get("name") in YAGER:
            out[kind].setdefault("eps", 0.0)
    return out


def budget_optimizer(config: dict[str, Any]) -> dict[str, Any]:
    """A budget's optimizer settings (`profile.optimizer`, which replaced `optimizer`'s at train
    time) into `optimizer`: the rate and schedule the run trained with."""
    profile = config.get("profile")
    if not isinstance(profile, Mapping) or "optimizer" not in profile:
        return config
    profile = dict(profile)
    overlay = profile.pop("optimizer") or {}
    return {
        **config,
        "profile": profile,
        "optimizer": {**(config.get("optimizer") or {}), **overlay},
    }


def validation_named(record: dict[str, Any]) -> dict[str, Any]:
    """A run evaluated on a held-out validation split instead of the test split (before a run
    evaluated both): its accuracies there named `validation_*`, its test accuracies None (it
    measured none)."""
    task = record["config"].get("task") or {}
    if not task.get("validation") or VALIDATION_ACCURACY in record:
        return record
    return {
        **record,
        VALIDATION_ACCURACY: record.get(TEST_ACCURACY),
        BEST_VALIDATION_ACCURACY: record.get(BEST_TEST_ACCURACY),
        "validation_digit_accuracy": record.get(DIGIT_ACCURACY),
        TEST_ACCURACY: None,
        BEST_TEST_ACCURACY: None,
        "sum_accuracy": None,
        DIGIT_ACCURACY: None,
    }


def unstepped_schedule(config: dict[str, Any]) -> dict[str, Any]:
    """An optimizer's `cosine_to` (before 2026-12-06) out: the module owns its update, so
    Lightning stepped no schedule and nothing else did; those runs trained at the constant rate
    lr (the cosine's factor at step 0), which the config then says."""
    optimizer = config.get("optimizer")
    if not isinstance(optimizer, Mapping) or "cosine_to" not in optimizer:
        return config
    return {**config, "optimizer": {k: v for k, v in optimizer.items() if k != "cosine_to"}}


CONFIG_STEPS: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = (
    kb_not_problem,
    added_keys,
    budget_optimizer,
    unstepped_schedule,
)
RECORD_STEPS: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = (validation_named,)


def migrate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` (a record's, of any age) in today's form."""
    out = dict(config)
    for step in CONFIG_STEPS:
        out = step(out)
    return out


GROUPS = (
    "task",
    "kb",
    "problem",
    "profile",
    "optimizer",
    "data",
    "net",
    "augment",
    "model",
    *KINDS,
)


def shape_defect(record: Mapping[str, Any]) -> str | None:
    """Why a record's config has not the shape the steps read (each group a mapping, the old
    `problem.kb` and a budget's `profile.optimizer` too), naming the key; None when it has.

    >>> shape_defect({"config": {"task": "mnist_kb"}})
    'config.task is a str, not a mapping'
    """
    config = record.get("config")
    if not isinstance(config, Mapping):
        return f"config is a {type(config).__name__}, not a mapping"
    nested = [(g, config.get(g)) for g in GROUPS]
    for group, inner in (("problem", "kb"), ("profile", "optimizer")):
        if isinstance(config.get(group), Mapping):
            nested.append((f"{group}.{inner}", config[group].get(inner)))
    for key, value in nested:
        if value is not None and not isinstance(value, Mapping):
            return f"config.{key} is a {type(value).__name__}, not a mapping"
    return None


# The keys added_keys writes, at the value each was added with: until the records were migrated
# to today's form (837a2fc), a config's hash left such a key out at that value and read the kb
# keys at their `problem` place (`shim_hash`), so that adding or moving a key moved no record.
SHIM_ADDED: dict[tuple[str, ...], Any] = {
    ("model", "ntn_bias"): False,
    ("optimizer", "fused"): True,
    ("task",): {"name": "mnist_kb"},
    ("net",): {"name": "paper"},
    ("augment",): {"degrees": 0.0, "shift": 0.0},
    ("task", "valuation"): "log",
    ("task", "validation"): 0.0,
    ("task", "loss"): "exact",
    **{(kind, "eps"): 0.0 for kind in KINDS},
}


def _without_shim_added(config: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """`config` (the mapping at `path`) without the SHIM_ADDED keys at their added value."""
    out = {}
    for key, value in config.items():
        here, number = (*path, key), numbers_as_floats(value)
        if here in SHIM_ADDED and type(number) is type(SHIM_ADDED[here]):
            if number == SHIM_ADDED[here]:
                continue
        out[key] = _without_shim_added(value, here) if isinstance(value, Mapping) else value
    return out


def shim_hash(config: Mapping[str, Any]) -> str:
    """The hash the checkouts before 837a2fc named a record by (hashing.config_hash with the kb
    keys at their `problem` place and each SHIM_ADDED key at its added value left out)."""
    moved = _moved(config, [(new, old) for old, new in PROBLEM_TO_KB])
    return digest(_without_shim_added(hashed_config(moved), ()))


def hash_refusal(record: Mapping[str, Any], name: str) -> str | None:
    """Why the hash `name` (a record's file name and `config_hash`) is not what its config, as
    it is written, hashes to under either hashing a checkout named records by (today's
    `config_hash`, or `shim_hash` before 837a2fc), or None: its config was edited, or the record
    is another run's; migrating it would count those numbers for another configuration. None
    too for a config of another shape (`migrate_record` names its key)."""
    config = record.get("config")
    if shape_defect(record) is not None or name in (config_hash(config), shim_hash(config)):
        return None
    return (
        f"its config hashes to {config_hash(migrate_config(config))}, not its name {name} "
        "(nor under the hash before the records' migration): edited, or another run's record"
    )


def migrate_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` in today's form: its config (its `config_hash` that config's) and its fields; a
    ValueError naming the key when its config has not the shape a record has (`shape_defect`)."""
    why = shape_defect(record)
    if why is not None:
        raise ValueError(f"cannot be migrated: {why}")
    out = dict(record)
    out["config"] = migrate_config(record["config"])
    if "config_hash" in out:  # a form's hash is over all of it
        out["config_hash"] = config_hash(out["config"])
    for step in RECORD_STEPS:
        out = step(out)
    return out


FOLDERS = "python -m campaign.migrate_records DIR [DIR ...] rewrites a records folder in place"
USAGE = (
    "usage: python -m dfl_bench.lifecycle.migrate [--help]: the steps that bring a run record of "
    "an older form to today's (migrate_record, migrate_config), which a harvest and the results "
    f"loader call; it takes no other argument and changes no file ({FOLDERS})"
)


def main(argv: Sequence[str] | None = None) -> int:
    """`--help` (or `-h`): USAGE, exit 0; anything else, or nothing: one line naming what it
    got, EXIT_INVALID. Nothing is read or written."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--help" in args or "-h" in args:
        print(USAGE)
        return 0
    if not args:
        why = "nothing to do: it takes no argument but --help"
    elif args[0].startswith("-"):
        why = f"unknown option {args[0]!r}: it takes none but --help"
    else:
        why = f"it takes no argument but --help, got {args[0]!r}"
    print(f"[migrate] {why} ({FOLDERS})", file=sys.stderr)
    return EXIT_INVALID


if __name__ == "__main__":
    sys.exit(main())
