"""Checks before training: each bad value is one ValueError line naming what is valid.

`check_config` takes the resolved config (plain data); `check_overrides` refuses command-line
overrides the job's task would ignore (what an experiment declares: lifecycle/declared.py);
`check_writable` tries the folders a job writes to, so a records folder that cannot be written
fails now, not after training.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf

from dfl_bench.checks import MAX_SEED, MAX_THREADS, tail_spelling, tail_steps
from dfl_bench.checks import integer_in as _integer
from dfl_bench.checks import number as _number
from dfl_bench.kinds import KINDS
from dfl_bench.lifecycle.composed import check_complete, check_idle
from dfl_bench.lifecycle.file_overrides import (
    absent_refusal,
    budget_names,
    budget_refusal,
    config_groups,
    known_leaves,
    leaves,
    option_keys,
    top_level_keys,
    type_refusal,
)
from dfl_bench.lifecycle.trainer_values import check_trainer
from dfl_bench.operator_params import same_operator
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.schema import NOT_HASHED
from dfl_bench.tasks.net_names import net_refusal
from dfl_bench.tasks.values import TASKS, check_split_seed, check_subsets
from dfl_bench.untrusted import PLAIN_NAME

MAX_NAME = 100  # characters (a file name may have 255 bytes; a lock or a W&B run adds to it)


def check_name(value: Any, name: str) -> None:
    """`value` (a string or number) is a PLAIN_NAME, else a ValueError naming what is valid.

    >>> check_name("../../escaped", "experiment_name")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: experiment_name='../../escaped' must be a plain name (letters, digits and ...
    """
    text = str(value) if isinstance(value, int | float | str) else None
    if text is None or not PLAIN_NAME.fullmatch(text):
        raise ValueError(
            f"{name}={value!r} must be a plain name (letters, digits and _=+,.-; no '/', no "
            "leading '.'): it names a folder inside records_dir"
        )
    if len(text) > MAX_NAME:
        raise ValueError(
            f"{name} is {len(text)} characters long; at most {MAX_NAME}: it names a folder"
        )


FLAGS = ("force", "progress_bar", "cuda_graph", "compile_dfl")  # true or false, nothing else


PROFILE_KEYS = (
    "name",
    "max_steps",
    "eval_every",
    "log_every",
    "metrics_tail",
    "checkpoint_every",
    "subset_train",
    "subset_test",
)


def check_profile(profile: Mapping[str, Any], given: bool = False) -> None:
    """Its keys (PROFILE_KEYS: a budget's optimizer settings are the `optimizer` group's), the
    budget's name one a yaml declares (file_overrides.budget_names), the step budget and
    cadences: max_steps >= 1, the last evaluation's one spelling (check_last_evaluation), and a
    metrics window with a logging step in its one spelling (tail_spelling); the subsets it gives the
    data (tasks/values.check_subsets). `given`: the values given and not null alone (a
    record's: an older one may lack a key)."""
    unknown = sorted(set(profile) - set(PROFILE_KEYS))
    if unknown:
        raise ValueError(
            f"profile has no keys {unknown} (valid: {list(PROFILE_KEYS)}); a budget's optimizer "
            "settings go in its yaml's top-level `optimizer:` (conf/profile/minute.yaml)"
        )
    if (not given or profile.get("name") is not None) and profile.get("name") not in budget_names():
        raise ValueError(
            f"profile.name={profile.get('name')!r} is no budget a yaml declares; valid: "
            f"{sorted(budget_names())} (profile=NAME chooses one)"
        )
    for key, low in (
        ("max_steps", 1),
        ("log_every", 1),
        ("eval_every", 0),
        ("checkpoint_every", 0),
    ):
        if not given or profile.get(key) is not None:
            _integer(profile.get(key), f"profile.{key}", low)
    check_subsets(profile, "profile")
    if not given or None not in (profile.get(k) for k in ("max_steps", "eval_every")):
        check_last_evaluation(profile["eval_every"], profile["max_steps"])
    if given and None in (profile.get(k) for k in ("max_steps", "log_every", "metrics_tail")):
        return
    steps, tail = profile["max_steps"], profile.get("metrics_tail")
    _number(tail, "profile.metrics_tail", 0.0, open_low=True)
    if tail >= 1 and (tail != int(tail) or tail > steps):
        raise ValueError(
            f"profile.metrics_tail must be a fraction in (0, 1) or a whole number of steps "
            f"<= profile.max_steps={steps}, got {tail}"
        )
    window = tail_steps(tail, steps)
    log_every = profile["log_every"]
    if steps // log_every == (steps - window) // log_every:
        raise ValueError(
            f"profile.metrics_tail={tail} keeps the last {window} steps, which hold no logging "
            f"step (profile.log_every={log_every}); widen it or log more often"
        )
    spelled = tail_spelling(window, steps)
    if tail != spelled:
        raise ValueError(
            f"profile.metrics_tail={tail} keeps the last {window} of {steps} steps, as "
            f"profile.metrics_tail={spelled} does: write that"
        )


def check_last_evaluation(eval_every: int, max_steps: int) -> None:
    """One spelling of "evaluate at the last step only": eval_every=max_steps, the
    committed budgets' (conf/profile/minute.yaml); 0 or more steps than the budget is that run.

    >>> check_last_evaluation(0, 2500)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: profile.eval_every=0 evaluates at the last step only, as profile.eval_every=2500 ...
    """
    if eval_every == 0 or eval_every > max_steps:
        raise ValueError(
            f"profile.eval_every={eval_every} evaluates at the last step only, as "
            f"profile.eval_every={max_steps} (profile.max_steps) does: write that"
        )


def check_seed(seed: Any) -> None:
    """The run seed: an integer numpy and Lightning accept."""
    _integer(seed, "seed", 0, MAX_SEED)


# Mappings whose keys nothing else closes (each is read by name or passed on as keyword
# arguments: the optimizer's to torch, whose defaults spelled out would train the same numbers
# under another hash): a key there that no yaml sets nor ADDED declares is refused here, and a
# value of another kind than the yamls give it (`type_refusal`: optimizer.fused=1).
CLOSED = ("model", "data", "debug", "optimizer")
OPTIONED = ("optimizer", "net", "kb")  # groups whose option's yaml closes its keys further
OPEN = ("rows", "provenance", "row_provenance")  # an experiment's tables: any keys


@cache
def required_keys(conf_dir: str = CONFIG_DIR) -> dict[str, bool]:
    """The top-level keys every job reads -> whether its value is a mapping: the groups of
    config.yaml's defaults list and its own keys (but the tables of OPEN)."""
    primary = OmegaConf.to_container(OmegaConf.load(Path(conf_dir) / "config.yaml"))
    assert isinstance(primary, dict)
    groups = [k for d in primary["defaults"] if isinstance(d, dict) for k in d if " " not in k]
    out = {group: True for group in groups}
    for key, value in primary.items():
        if key not in ("defaults", "hydra", *OPEN):
            out[str(key)] = isinstance(value, dict)
    return out


def check_present(cfg: Mapping[str, Any]) -> None:
    """Every key a job reads is in the composed `cfg` (read without resolving it): `~data` or
    `~kb` would fail deep inside the job with a KeyError."""
    for key, mapping in required_keys().items():
        if key not in cfg:
            how = (
                f"choose one of {options(key)}"
                if key in config_groups()
                else f"set {key}.KEY=value instead"
                if mapping
                else "set a value instead"
            )
            raise ValueError(f"{key} is required: every job reads it (`~{key}` deletes it); {how}")


def options(group: str, conf_dir: str = CONFIG_DIR) -> list[str]:
    """The options of config group `group` (its yamls)."""
    return sorted(p.stem for p in (Path(conf_dir) / group).glob("*.yaml"))


def check_keys(config: Mapping[str, Any]) -> None:
    """The shape of a resolved job config: every key a job reads there (`check_present`), no
    key that nothing reads, each of its kind (`check_shape`), and every key its composition
    always gives a mapping (composed.check_complete: `~kb +kb={name: same, w_dfl: 10.0}`; a
    `~group.key` override is `check_deletions`' line first)."""
    check_present(config)
    check_shape(config)
    check_complete(config, required_keys())


def check_shape(config: Mapping[str, Any]) -> None:
    """A mapping where the configuration has one (`data=5`, `model=null`), and no key that
    nothing reads (`+foo=1`, `+model.foo=1`: the same numbers under another hash): at the top
    level the configuration's keys (`top_level_keys`), in CLOSED mappings the keys a yaml sets
    or a command line adds (file_overrides.ADDED), in an OPTIONED group's mapping those of its
    option (`option_keys`: no `fused` under sgd), every hashed value of the kind the yamls give
    it (`type_refusal`: optimizer.fused=1, trainer.deterministic=1); every group's own values
    are checked where it is built. A key a job reads that is absent passes (`check_present`,
    composed.check_complete)."""
    for key, mapping in required_keys().items():
        if mapping and key in config and not isinstance(config[key], Mapping):
            valid = options(key) if key in config_groups() else closed_keys(key)
            raise ValueError(
                f"{key}={config[key]!r} is not a mapping of its keys; set one of them "
                f"({key}.KEY=value): {valid}"
            )
    unknown = sorted(set(map(str, config)) - top_level_keys())
    if unknown:
        raise ValueError(
            f"{unknown[0]} is no key of the configuration: nothing reads it (it would train the "
            f"same numbers under another hash); valid keys: {sorted(required_keys())}"
        )
    closing = [(key, "", closed_keys(key)) for key in CLOSED] + [
        (key, f" {_option(config, key)!r}", option_keys(key, _option(config, key)))
        for key in OPTIONED
    ]
    for key, option, valid in closing:
        extra = sorted(set(map(str, config.get(key) or {})) - set(valid or ()))
        if valid is not None and extra:
            raise ValueError(
                f"{key}.{extra[0]} is no key of {key}{option}: no yaml sets it (it would train "
                f"numbers no table names, or the same under another hash); valid keys: "
                f"{sorted(valid)}"
            )
    for key, value in leaves({k: v for k, v in config.items() if k not in NOT_HASHED}, ""):
        why = type_refusal(key, value)
        if why is not None:
            raise ValueError(why)


def _option(config: Mapping[str, Any], group: str) -> str:
    """The option of config group `group` that `config` holds (its mapping's `name`)."""
    return str((config.get(group) or {}).get("name"))


@cache
def closed_keys(key: str, conf_dir: str = CONFIG_DIR) -> list[str]:
    """The keys mapping `key` of config.yaml may hold: those a yaml sets or ADDED declares."""
    prefix = f"{key}."
    return sorted({k.removeprefix(prefix).split(".")[0] for k in known_leaves(conf_dir)
                   if k.startswith(prefix)})  # fmt: skip


def check_config(config: Mapping[str, Any], task: Any = None) -> None:
    """Every value a job relies on but what its objects check where they are built (the
    optimizer: `tasks.optim.spec`, when the task builds its run), before any data is loaded,
    and no operator spelled as another (operator_params.same_operator, a record's check's too)
    nor another network under a network's name (net_names.net_refusal, a record's check's too);
    `task`: the job's, where already looked up."""
    check_keys(config)
    check_name(config.get("experiment_name"), "experiment_name")
    if config.get("row") is not None:
        check_name(config["row"], "row")
    check_profile(config["profile"])
    check_trainer(config.get("trainer") or {})
    check_seed(config.get("seed"))
    if config.get("threads") is not None:
        _integer(config["threads"], "threads", 1, MAX_THREADS)
    for flag in FLAGS:
        if flag in config and not isinstance(config[flag], bool):
            raise ValueError(f"{flag} must be true or false, got {config[flag]!r}")
    check_task(config, task)
    why = net_refusal(config["net"]) if isinstance(config.get("net"), Mapping) else None
    if why is not None:  # one hash, one network: a record's check too (record_config)
        raise ValueError(why)
    check_split_seed(config)  # after the task's own check of its data's values
    check_idle(config)  # a key its task's run does not read at the composed value
    for kind in KINDS:  # an operator another one spells (a run record's too: record_config)
        why = same_operator(kind, config[kind]) if isinstance(config.get(kind), Mapping) else None
        if why is not None:
            raise ValueError(why)


def check_task(config: Mapping[str, Any], task: Any = None) -> None:
    """The task the config names (its yaml's `_target_`; `task` where already looked up) and
    everything it reads of the config, by the task's own check (dfl_bench/tasks/)."""
    from dfl_bench import tasks

    (task or tasks.task_of(config)).check(config)


def check_overrides(cfg: DictConfig, overrides: Sequence[str], task: Any = None) -> None:
    """Refuse a row without an experiment's rows, and each override `check_override` refuses
    (an override the experiment's row or stage replaces: lifecycle/declared.py)."""
    from dfl_bench import tasks

    task = task or tasks.task_of(cfg)
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.key_or_group
        if key == "row" and not cfg.get("rows"):
            raise ValueError(
                f"{override.input_line} needs an experiment with named rows (+experiment=NAME); "
                f"{'no experiment' if cfg.get('experiment_name') == 'default' else 'this one'} "
                "names its cells itself"
            )
        if key == "experiment" and not override.is_delete():
            check_name(override.value(), "experiment")
        check_override(override, task.NAME, task.IGNORES)


def check_override(override: Override, task: str, ignores: Sequence[str]) -> None:
    """Refuse an override of a job of task `task` that sets a config group the task does not
    read (`ignores`: the same numbers, another hash), names the budget or sets its checkpoint
    cadence, by key or inside a mapping set whole (file_overrides.budget_refusal), or gives an
    added key null or a value meaning it is absent (`absent_refusal`)."""
    key = override.key_or_group
    recommended = recommended_refusal(override.input_line)
    if recommended is not None:
        raise ValueError(recommended)
    if key.lstrip("+~").split(".")[0] in ignores:
        raise ValueError(
            f"{override.input_line} is refused: task {task!r} does not read "
            f"{', '.join(ignores)} (it would train the same numbers under another "
            "configuration); leave it out"
        )
    if override.is_delete() or override.is_sweep_override() or key.startswith("hydra"):
        return
    if key in ("row", "experiment"):
        return
    budget = budget_refusal(key.lstrip("+"), override.value())  # `profile={name:...}` too
    if budget is not None:
        raise ValueError(f"{override.input_line} is refused: {budget}")
    absent = absent_refusal(key.lstrip("+"), override.value())
    if absent is not None:
        raise ValueError(f"{override.input_line}: {absent}")


def uncalled_refusal(config: Mapping[str, Any], overrides: Sequence[Any]) -> str | None:
    """Why an override of `overrides` (a job's, a record's, a tool's) sets a config group, or a
    key of it, that the run of `config` never calls (its task's declared `uncalled`,
    tasks/values TASKS: an operator kind that no formula of its knowledge base's selection
    has), in one line; or None. Another value of it trains the same numbers under another
    hash; a value an experiment's yaml sets (an operator family's) is no override and passes."""
    name = (config.get("task") or {}).get("name")
    settings = TASKS.get(name) if isinstance(name, str) else None
    uncalled = settings.uncalled(config) if settings is not None and settings.uncalled else {}
    for line in overrides if uncalled else ():
        group = override_group(line) if isinstance(line, str) else None
        if group in uncalled:
            return (
                f"{line} is refused: {uncalled[group]}: leave {group} as composed (another "
                "value trains the same numbers under another hash)"
            )
    return None


def recommended_refusal(line: Any) -> str | None:
    """Why the override `line` (a job's, a record's, a tool's) sets or deletes a
    `recommended/<kind>` group, in one line; or None. That group is Section 10.2's parameters
    of the chosen operator (conf/recommended/, config.yaml's defaults), chosen with it: another
    value of it is that operator's keys set another way (`~recommended/tnorm` is `tnorm.p=2`),
    which the checks of `<kind>.KEY` overrides would not see."""
    group = override_group(line) if isinstance(line, str) else None
    if group is None or group.split("/")[0] != "recommended":
        return None
    kind = group.partition("/")[2]
    kind = kind if kind in KINDS else "<kind>"
    return (
        f"{line} is refused: {group} is the paper's parameters for the chosen {kind} "
        f"(conf/recommended/, chosen with it): set {kind}=<option> or {kind}.<key>=<value> instead"
    )


@cache
def override_group(line: str) -> str | None:
    """The top-level key the override `line` sets or deletes (`exists` of `+exists=maximum`,
    `tconorm` of `tconorm.p=3`), or None where Hydra reads no override."""
    try:
        return OverridesParser.create().parse_override(line).key_or_group.split(".")[0]
    except HydraException:
        return None


def check_deletions(overrides: Sequence[str]) -> None:
    """Refuse `~group.key`: the code's default of a key a yaml sets then trains, the run that
    value gives, under another hash (a whole group, `~net`, goes with what replaces it)."""
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.key_or_group
        if override.is_delete() and "." in key and not key.startswith("hydra"):
            raise ValueError(
                f"{override.input_line} is refused: deleting {key} trains its code's default "
                f"under another hash; set {key}=<value> instead"
            )


def row_owner(raw: Any, key: str, table: str = "row") -> str | None:
    """The dotted key the override `key` would set that an experiment takes from its row (a
    value in the unresolved config `raw` that names `rows[${row}]` or `rows.${row}`, as
    `${rows[${row}].tnorm}` and `${oc.select:rows.${row}.lr,0.1}` do): `tnorm` of `tnorm.p`
    under `row=yager_p2`, or the first such key below `key` (`optimizer.lr` of `optimizer=sgd`
    or `optimizer={...}`, which would replace it); another `table`'s (`stage`:
    `${stages[${stage}]}`) likewise; None where there is none: the one rule of both the command
    line's preflight and each job's check."""
    taken = re.compile(rf"(?<![\w.]){table}s[.\[]\$\{{{table}\}}")
    node, parts = raw, []
    for part in key.lstrip("+~").split("."):
        if not isinstance(node, Mapping):
            break  # a value taken whole (`${nets[${rows[${row}].net}]}`): its keys with it
        if part not in node:
            return None
        node = node[part]
        parts.append(part)
    owned = [k for k, value in leaves(node, ".".join(parts)) if taken.search(str(value))]
    return owned[0] if owned else None


def row_refusal(line: str, raw: Mapping[str, Any], owned: str) -> str:
    """Why override `line` cannot apply: the row sets `owned` (`row_owner`)."""
    return (
        f"{line} is refused: experiment {raw.get('experiment_name')!r} sets {owned} from its "
        f"row (row={raw.get('row')}); pick another row, or run without +experiment and set "
        f"{owned} yourself"
    )


def check_writable(folder: str | Path, name: str) -> None:
    """A file can be written in `folder`: where it exists, a probe file is; where it does not,
    its nearest existing ancestor is a writable folder (nothing is created: a refused job
    leaves no folder behind; the job makes it when it writes)."""
    path = Path(folder)
    try:
        if path.exists():
            fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=path)  # a new file, no link
            os.close(fd)
            os.unlink(probe)
            return
        above = next(p for p in path.absolute().parents if p.exists())
        if not above.is_dir():
            raise NotADirectoryError(f"{above} is a file")
        if not os.access(above, os.W_OK | os.X_OK):
            raise PermissionError(f"{above} cannot be written")
    except OSError as err:
        raise ValueError(f"{name}={folder} cannot be written ({err.strerror or err})") from None
