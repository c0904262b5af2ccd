"""Overrides read from a file (a record's `overrides`, a plan's cell, a harvest's records) are
untrusted: each must be a plain `key=value` that sets one value, decided on what Hydra parses of
it: a config group's option (a name), or a key some yaml of the configuration sets (or one a
command line adds, ADDED) to a number, true/false, null or a plain text, of the kind its yamls
give it (`optimizer.fused=1` is no flag) and as the record schema has it (record_fields.FIELDS:
`model.ntn_k=100000000` is no size a run builds). Refused: a deletion
(`~kb`), a dict or list value (`data={cache_dir:/x}` sets every key inside it), a mapping set
whole (`data=5`), null for a group, a key no yaml sets (`+model.foo=1` trains the same numbers
under another hash), an argument of the trainer or the logger (`+trainer.default_root_dir=/x`
names a folder: a file chooses their option, `trainer=cpu`), a Hydra flag
(`--experimental-rerun=...` loads a pickle), a Hydra setting at any depth (`hydra.job.env_set`
sets the job's environment), a package (`group@pkg=`), an interpolation or resolver (`${oc.env:
...}` would put the reader's secrets into a result) in any spelling (a `$` or a backslash
anywhere: Hydra unescapes `$\\{...\\}` into one), a `_target_` (code to build), a key that
sets a path (PATH_KEYS: a file from others names no folder to write in; a record's own
`records_dir` and `checkpoint_dir`, where it ran, are taken off by `located` before the check),
a debug flag, a sweep (`row=a,b` or `range(...)` in a plan's multirun trains configurations
the plan does not name, which its status never counts), and any text that is not one printable
line. A list or mapping is taken only where the configuration takes one of a knowledge base's
formulas (COLLECTIONS: `kb.formulas=[1,3]`, `kb.weights={1:2}`), each item a name or a number,
which the job's own check of the whole `kb` judges. Nothing here runs or resolves the text it
checks.

    >>> refusal("kb=both") is None
    True
    >>> refusal("--experimental-rerun=/tmp/x.pickle")
    'not a plain key=value'
    >>> refusal("kb.w_dfl=${oc.env:WANDB_API_KEY}")
    'an interpolation (${...}) or an escape'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf

from dfl_bench.lifecycle.record_fields import unfit
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.schema import NOT_HASHED, PATH_KEYS
from dfl_bench.tasks.values import GROUPS

# [+|++|~] key[.key|/key]* = value: the key's parts are identifiers, nothing before the key
PLAIN = re.compile(r"(?:\+\+|\+|~)?([A-Za-z_][A-Za-z0-9_]*(?:[./][A-Za-z0-9_]+)*)=(.*)", re.S)


OPTION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,-]*")  # a group's option(s): names, no path
# PATH_KEYS (schema.py) set where something is read or written: never from a file from others.
OPTION_ONLY = ("trainer", "logger")  # groups a file chooses an option of, never an argument
# Keys no yaml sets that a command line adds with `+` (docs/training.md, docs/tasks.md): the
# optimizer's schedules, the held-out share of the paper's task, the tests' signals; each with
# the values an override may not give it (`absent_refusal`), which mean what leaving it out
# means: null, a warmup of no steps, a cosine from lr to lr (tasks/optim.py), nothing held out.
ADDED: dict[str, tuple[Any, ...]] = {
    "optimizer.warmup": (None, 0),
    "optimizer.cosine_final": (None, 1.0),
    "data.validation": (None, 0.0),
    "debug.sigterm_at_step": (None,),
    "debug.sigint_at_step": (None,),
}
# The keys that take a list or a mapping of a knowledge base's formulas (docs/training.md): their
# items are names or numbers, judged by the job's check of the whole `kb` (kb_formulas), which
# knows the knowledge base they name.
COLLECTIONS: dict[str, type] = {"kb.formulas": list, "kb.weights": dict}
FORMULA = re.compile(r"[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)?")  # `1`, `same/1`: a formula's name
WHERE_IT_RAN = ("records_dir", "checkpoint_dir")  # a record's own folders, not a setting of it
APPLIED_ONLY = ("row",)  # the one unhashed key a plan's override may set: which row of a table
# A budget's name is its yaml's: an override of it would record one budget as another's
# (`profile=smoke profile.name=quick`) or as none a yaml declares.
BUDGET_NAMED = (
    "profile.name names the budget profile=NAME composes: choose the budget with profile=<name>"
)
# The checkpoint cadence changes no number, yet is hashed (the committed records hold their
# budgets' values, 250 to 5000): the job takes its budget's, so one run has one hash.
BUDGET_CADENCE = (
    "profile.checkpoint_every is the checkpoint cadence of the budget profile=NAME composes (it "
    "is hashed: another would record the same numbers under another hash); choose the budget "
    "with profile=<name>"
)
BUDGET_KEYS = {"profile.name": BUDGET_NAMED, "profile.checkpoint_every": BUDGET_CADENCE}


@cache
def config_groups(conf_dir: str = CONFIG_DIR) -> frozenset[str]:
    """The config groups under `conf_dir` (its folders, but Hydra's)."""
    return frozenset(p.name for p in Path(conf_dir).iterdir() if p.is_dir() and p.name != "hydra")


@cache
def known_keys(conf_dir: str = CONFIG_DIR) -> frozenset[str]:
    """The configuration's own top-level keys under `conf_dir`: its config groups and the keys
    of config.yaml (but `defaults` and `hydra`)."""
    primary = OmegaConf.to_container(OmegaConf.load(Path(conf_dir) / "config.yaml"))
    keys = {str(k) for k in primary if k not in ("defaults", "hydra")}  # type: ignore[union-attr]
    return config_groups(conf_dir) | keys


def _package(path: Path, conf_dir: Path) -> str:
    """Where the yaml `path` under `conf_dir` puts its keys: its `# @package` line, else its
    group (`tnorm`), "" for config.yaml and `_global_`."""
    for line in path.read_text().splitlines():
        if line.startswith("# @package "):
            package = line.removeprefix("# @package ").strip()
            return "" if package == "_global_" else package
    return ".".join(path.relative_to(conf_dir).parent.parts)


def leaves(node: Any, prefix: str) -> list[tuple[str, Any]]:
    """The (dotted key, value) of the values in `node` under `prefix` (an empty mapping is one)."""
    if isinstance(node, dict) and node:
        return [leaf for k, v in node.items() for leaf in leaves(v, f"{prefix}.{k}".lstrip("."))]
    return [(prefix, node)]


@cache
def file_values(conf_dir: str = CONFIG_DIR) -> dict[str, tuple[tuple[str, Any], ...]]:
    """Each yaml under `conf_dir` (its path there; not Hydra's) -> the (dotted key, value) it
    sets: config.yaml's, each group option's under its package, no `defaults` list."""
    root, out = Path(conf_dir), dict[str, tuple[tuple[str, Any], ...]]()
    for path in sorted(root.rglob("*.yaml")):
        if path.relative_to(root).parts[0] == "hydra":
            continue
        node = OmegaConf.to_container(OmegaConf.load(path))
        if isinstance(node, dict):
            node = {k: v for k, v in node.items() if k not in ("defaults", "hydra")}
            found = leaves(node, _package(path, root)) if node else []
            out[path.relative_to(root).as_posix()] = tuple(found)
    return out


@cache
def yaml_values(conf_dir: str = CONFIG_DIR) -> dict[str, tuple[Any, ...]]:
    """Every dotted key a yaml under `conf_dir` sets (`file_values`) -> the values they set."""
    values = dict[str, tuple[Any, ...]]()
    for leaves in file_values(conf_dir).values():
        for key, value in leaves:
            values[key] = (*values.get(key, ()), value)
    return values


@cache
def option_keys(group: str, option: str, conf_dir: str = CONFIG_DIR) -> frozenset[str] | None:
    """The keys mapping `group` may hold where its option is `option`: those its own yaml
    (conf/<group>/<option>.yaml) sets, those another yaml sets under it that names no other
    option (a budget's `optimizer.lr`, an experiment's whole `net` named so) and those ADDED;
    None where `group` has no such option (a user's own)."""
    if f"{group}/{option}.yaml" not in file_values(conf_dir):
        return None
    prefix, keys = f"{group}.", [k for k in ADDED if k.startswith(f"{group}.")]
    for path, leaves in file_values(conf_dir).items():
        named = dict(leaves).get(f"{prefix}name", option)
        own = path == f"{group}/{option}.yaml" or not path.startswith(f"{group}/")
        keys += [key for key, _ in leaves if key.startswith(prefix) and named == option and own]
    return frozenset(key.removeprefix(prefix).split(".")[0] for key in keys)


@cache
def budget_names(conf_dir: str = CONFIG_DIR) -> frozenset[str]:
    """The budgets the yamls under `conf_dir` declare: the `profile.name` each sets
    (conf/profile/'s, an experiment's own; one taken from a row, `${rows[${row}].profile}`, is
    some other yaml's)."""
    names = yaml_values(conf_dir).get("profile.name", ())
    return frozenset(n for n in names if isinstance(n, str) and "${" not in n)


@cache
def known_leaves(conf_dir: str = CONFIG_DIR) -> frozenset[str]:
    """Every dotted key a yaml under `conf_dir` sets (`yaml_values`) and those ADDED."""
    return frozenset(yaml_values(conf_dir)) | frozenset(ADDED)


def _kind(value: Any) -> str:
    """What a yaml's value declares: "true or false", "a number", "null" or "a text"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    return "a number" if isinstance(value, int | float) else "a text"


def type_refusal(key: str, value: Any, conf_dir: str = CONFIG_DIR) -> str | None:
    """Why `value` is not of the one kind the yamls under `conf_dir` give the dotted `key`
    (true or false, or a number; null where a yaml sets null too), or None: a key any yaml sets
    to a text (an interpolation among them) or to null alone declares no kind."""
    kinds = {_kind(v) for v in yaml_values(conf_dir).get(key, ())}
    declared = kinds - {"null"}
    if len(declared) != 1 or "a text" in declared or _kind(value) in kinds:
        return None
    return f"{key} must be {declared.pop()}, as the configuration's yamls set it, got {value!r}"


def absent_refusal(key: str, value: Any) -> str | None:
    """Why an override gives the ADDED `key` a value that means what leaving it out means (its
    ADDED values: the same run under another hash), or None; the one rule of the command line
    and the file gate (a yaml's own value is no override: a record's or an experiment's passes).

    >>> absent_refusal("optimizer.warmup", 0)  # doctest: +ELLIPSIS
    'optimizer.warmup=0 is what leaving optimizer.warmup out means (...); drop it'
    >>> absent_refusal("optimizer.warmup", 1) is None
    True
    """
    if not any(_same(value, absent) for absent in ADDED.get(key, ())):
        return None
    shown = "null" if value is None else value
    return (
        f"{key}={shown} is what leaving {key} out means (the same run under another hash, "
        f"`~{key}` where a yaml sets it); drop it"
    )


def _same(value: Any, absent: Any) -> bool:
    """Whether `value` is the ADDED value `absent` (a number equal to it, no true/false)."""
    if absent is None or isinstance(value, bool):
        return value is absent
    return isinstance(value, int | float) and value == absent


@cache
def top_level_keys(conf_dir: str = CONFIG_DIR) -> frozenset[str]:
    """The top-level keys a job's config may hold: the configuration's (`known_keys`) and those
    an experiment's yaml sets (its tables, its `rule`, its `stage`)."""
    return known_keys(conf_dir) | {leaf.split(".")[0] for leaf in known_leaves(conf_dir)}


def value_refusal(key: str, value: Any, conf_dir: str = CONFIG_DIR) -> str | None:
    """Why Hydra's parsed `key=value` from a file sets something other than one value of the
    configuration under `conf_dir` (its kind, `type_refusal`, and the record schema's check of
    `config.<key>`, record_fields.unfit), or None."""
    if isinstance(value, dict | list):
        return collection_refusal(key, value)
    parts = key.split(".")
    if parts[0] in OPTION_ONLY and len(parts) > 1:
        return (
            f"{key} is an argument of the {parts[0]} (one names a folder): a file chooses its "
            f"option ({parts[0]}=NAME)"
        )
    if key in config_groups(conf_dir):
        if not isinstance(value, str) or ".." in value or not OPTION.fullmatch(value):
            return "a config group's option must be a name (no path, not null)"
        return None
    if key not in known_leaves(conf_dir):
        nested = any(leaf.startswith(f"{key}.") for leaf in known_leaves(conf_dir))
        if nested:
            return f"{key} holds several keys: a file sets one of them ({key}.KEY=value)"
        parent = key.rpartition(".")[0]
        valid = sorted(k.removeprefix(f"{parent}.") for k in known_leaves(conf_dir)
                       if k.rpartition(".")[0] == parent)  # fmt: skip
        return f"{key} is set by no yaml of the configuration; valid keys there: {valid}"
    why = absent_refusal(key, value) or type_refusal(key, value, conf_dir)
    why = why or unfit({"config": _nested(key, value)}, whole=False)
    why = why or group_refusal(key, value, conf_dir)
    return None if why is None else why.removeprefix("config.")


def collection_refusal(key: str, value: dict[Any, Any] | list[Any]) -> str | None:
    """Why the list or mapping `value` is no value of `key`: one of COLLECTIONS' kind, each item
    a name or a number (true/false no number), or None."""
    kind = COLLECTIONS.get(key)
    if kind is None:
        taken = ", ".join(f"{k} (a {t.__name__})" for k, t in COLLECTIONS.items())
        return (
            "a dict or list value: a file sets one value (a name, a number, true/false, a text); "
            f"only {taken} take several"
        )
    if not isinstance(value, kind):
        return f"{key} takes a {kind.__name__} of formulas, got a {type(value).__name__}"
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
    if any(
        isinstance(i, bool)
        or not isinstance(i, int | float | str)
        or (isinstance(i, str) and not FORMULA.fullmatch(i))
        for i in items
    ):
        return f"{key}'s items are formula names or numbers, got {value!r:.80}"
    return None


def group_refusal(key: str, value: Any, conf_dir: str = CONFIG_DIR) -> str | None:
    """Why the job's check of `key`'s group (tasks/values.GROUPS) refuses `value` among the
    values the yamls give the group's other keys (the first that is no interpolation), or None
    (also where those values alone do not pass: nothing to judge it against)."""
    group, _, leaf = key.partition(".")
    if group not in GROUPS or not leaf or "." in leaf:
        return None
    base = {
        dotted.partition(".")[2]: next((v for v in values if "${" not in str(v)), None)
        for dotted, values in yaml_values(conf_dir).items()
        if dotted.partition(".")[0] == group and "." not in dotted.partition(".")[2]
    }
    try:
        GROUPS[group](base)
    except ValueError:
        return None
    try:
        GROUPS[group]({**base, leaf: value})
    except ValueError as err:
        return str(err)
    return None


def _nested(key: str, value: Any) -> Any:
    """`value` at the dotted `key` of an empty mapping: `{"model": {"ntn_k": 3}}`."""
    for part in reversed(key.split(".")):
        value = {part: value}
    return value


def refusal(override: Any, conf_dir: str = CONFIG_DIR, applied: bool = False) -> str | None:
    """Why `override` (read from a file) is no plain config override of the configuration under
    `conf_dir` (this checkout's, or the commit's a probe runs), or None when it is one; one a
    tool `applied` (a plan's) sets only what a result depends on, or the row (APPLIED_ONLY)."""
    match = PLAIN.fullmatch(override) if isinstance(override, str) else None
    if (why := unsettable(override)) is not None or match is None:
        return why
    key, value = match.groups()
    parts = re.split(r"[./]", key)
    if "_target_" in override:
        return "a _target_ (code to build)"
    if key in PATH_KEYS:
        return f"{key} sets a path"
    if (why := budget_refusal(key, _parsed_value(override), cadence=applied)) is not None:
        return why  # a record's cadence is what its commit ran (the probe drops it)
    if parts[0] == "debug":
        return "a debug flag"
    if parts[0] not in top_level_keys(conf_dir):
        return f"{parts[0]!r} is no key of the configuration"
    if key in config_groups(conf_dir) and (".." in value or not OPTION.fullmatch(value)):
        return "a config group's option must be a name (no path)"
    if (why := one_value(override)) is not None:
        return why
    parsed = _parser().parse_override(override)
    if parsed.is_delete():
        return "a deletion (~): a file sets a value, it removes none"
    if (why := value_refusal(key.replace("/", "."), parsed.value(), conf_dir)) is not None:
        return why
    if applied and parts[0] in NOT_HASHED and parts[0] not in APPLIED_ONLY:
        return (
            f"{parts[0]} is how a run is kept or shown, not what it computes (`force` reruns "
            "over finished records): a file does not choose it"
        )
    return None


def unsettable(override: Any) -> str | None:
    """Why `override` sets no config value at all, or None: no printable text, no plain
    `key=value` (a flag), a Hydra setting at any depth, an interpolation or escape (`refusal`'s
    first checks; a record's overrides are held to these, records.override_refusal)."""
    if not isinstance(override, str):
        return f"a {type(override).__name__}, not a text"
    if not override.isprintable():
        return "not one printable line"
    match = PLAIN.fullmatch(override)
    if match is None:
        return "not a plain key=value"
    if "hydra" in re.split(r"[./]", match.group(1)):
        return "a Hydra setting"
    if "$" in override or "\\" in override:
        return "an interpolation (${...}) or an escape"
    return None


@cache
def _parser() -> OverridesParser:
    return OverridesParser.create()


def _parsed_value(override: str) -> Any:
    """Hydra's value of `override`, or None where Hydra reads none (`one_value` says why)."""
    try:
        return _parser().parse_override(override).value()
    except HydraException:
        return None


def budget_refusal(key: str, value: Any, cadence: bool = True) -> str | None:
    """Why the override of the dotted `key` to Hydra's parsed `value` names the budget or (with
    `cadence`) sets its checkpoint cadence (BUDGET_KEYS): by its key or by a key inside the
    mapping it sets whole (`profile={name:quick,...}`), or None."""
    for set_key in (key, *(k for k, _ in leaves(value, key))):
        if set_key in BUDGET_KEYS and (cadence or set_key == "profile.name"):
            return BUDGET_KEYS[set_key]
    return None


@cache
def one_value(override: str) -> str | None:
    """Why Hydra does not read `override` as one value, or None: a sweep (`a,b`, `range(...)`,
    `choice(...)`, `glob(...)`) would have a tool that applies it in a multirun train jobs the
    file does not name."""
    try:
        parsed = _parser().parse_override(override)
    except HydraException:
        return "not an override Hydra reads"
    if parsed.is_sweep_override():
        return "a sweep (a,b / range / choice / glob: several jobs), not one value"
    return None


def located(overrides: Iterable[Any]) -> list[Any]:
    """A record's overrides without those that say where it ran (WHERE_IT_RAN: its records and
    checkpoint folders), which a tool reading the record neither checks nor applies."""
    out = []
    for override in overrides:
        match = PLAIN.fullmatch(override) if isinstance(override, str) else None
        if match is None or match.group(1) not in WHERE_IT_RAN:
            out.append(override)
    return out


def check_file_overrides(
    overrides: Iterable[Any], source: str, conf_dir: str = CONFIG_DIR, applied: bool = False
) -> list[str]:
    """`overrides` from the file `source`, each checked (`refusal` against `conf_dir`, `applied`
    by a tool that runs them); a ValueError naming the first refused and why."""
    out = []
    for override in overrides:
        why = refusal(override, conf_dir, applied)
        if why is not None:
            raise ValueError(
                f"{source}: the override {str(override)[:80]!r} is refused ({why}); an override "
                "read from a file must be a plain key=value of the configuration"
            )
        out.append(override)
    return out
