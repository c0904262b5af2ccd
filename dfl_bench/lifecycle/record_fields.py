"""The fields of a run record that the tools read (FIELDS): each where given of the kind a job
writes, by the job's own checks where it has one (checks.py, tasks/values.GROUPS), every text a
printable line (`unprintable_keys`); `unfit` names the first that is not (records.invalid, and
the file gate for one override's value, file_overrides.value_refusal)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from dfl_bench import checks
from dfl_bench.checks import fraction, integer_in, number
from dfl_bench.kinds import KINDS
from dfl_bench.schema import PATH_KEYS, named
from dfl_bench.tasks.values import GROUPS, KEYWISE
from dfl_bench.untrusted import MAX_NAME, plain_name


def unprintable_keys(value: Any, key: str = "") -> Iterator[str]:
    """The dotted key of every text in `value`, at any depth, that is no printable line, and of
    every key that is none (a terminal escape or a newline in a config's key or value reaches a
    table's cell, its heading or a terminal)."""
    if isinstance(value, dict):
        for name, inner in value.items():
            dotted = f"{key}.{name}".lstrip(".")
            if not str(name).isprintable():
                yield dotted
            yield from unprintable_keys(inner, dotted)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from unprintable_keys(inner, f"{key}[{index}]")
    elif isinstance(value, str) and not value.isprintable():
        yield key


MAX_TEXT = 2000  # characters of a record's free text (a job's name, a failure's reason)
COMMIT = re.compile(r"[0-9a-f]{1,64}(-dirty)?")  # as records.git_commit writes it


def _fails(test: Callable[[Any], bool], what: str) -> Callable[[Any, str], None]:
    """A field's check: a ValueError `<key> <value> is <what>` where `test` fails."""

    def check(value: Any, key: str) -> None:
        if not test(value):
            raise ValueError(f"{key} {value!r:.80} is {what}")

    return check


PLAIN = _fails(plain_name, f"no plain name (<= {MAX_NAME} of A-Za-z0-9_=+,.-: it may name a file)")


def _text(value: Any) -> bool:
    """Whether `value` is a text of at most MAX_TEXT characters."""
    return isinstance(value, str) and len(value) <= MAX_TEXT


TEXT = _fails(_text, f"no text of <= {MAX_TEXT}")
SCALAR = _fails(lambda v: isinstance(v, str | int | float), "no number, text or true/false")
STAMP = _fails(lambda v: isinstance(v, str) and len(v) <= 64, "no time")
GIT = _fails(lambda v: isinstance(v, str) and bool(COMMIT.fullmatch(v)), "no git commit id")
TEXTS = _fails(lambda v: isinstance(v, list) and all(type(o) is str for o in v), "no list of texts")


# A record's paths: where its job read and wrote (a log folder, and its config's PATH_KEYS).
PATH_FIELDS = ("log_dir", *(f"config.{key}" for key in sorted(PATH_KEYS)))


def inside(path: Any) -> bool:
    r"""Whether the text `path` stays in its folder: no `..` part (quoted too, as an override may
    give it; parts split at `/` and at Windows' `\`, its dots read as NFKC reads them, so
    full-width `\uff0e\uff0e` is `..`); a record's paths and overrides of them (PATH_KEYS) are
    held to it.

    >>> inside("results/checkpoints"), inside("/tmp/c"), inside("a/../../x"), inside("'../x'")
    (True, True, False, False)
    >>> inside("..\\x"), inside("\uff0e\uff0e/x")
    (False, False)
    """
    if not isinstance(path, str):
        return False
    parts = re.split(r"[/\\]", unicodedata.normalize("NFKC", path))
    return ".." not in (p.strip("'\" ") for p in parts)


def _shown_name(value: Any) -> bool:
    """Whether `value` is a job's name, a text that is only shown (Hydra's override_dirname:
    `kb.formulas=[same/1]` holds a `/`): no leading `/` and no `..` part, so it names no path."""
    return _text(value) and not value.startswith("/") and inside(value)


def _overrides(value: Any, key: str) -> None:
    """An `overrides` field's check: a list of texts, none setting a path (PATH_KEYS) that
    leaves its folder (`checkpoint_dir=../../x`)."""
    TEXTS(value, key)
    for override in value:
        setting, _, given = override.partition("=")
        if setting.lstrip("+~") in PATH_KEYS and not inside(given):
            raise ValueError(f"{key} {override!r:.80} sets a path that leaves its folder (..)")


def _group(check: Callable[[Mapping[str, Any]], None]) -> Callable[[Any, str], None]:
    """A config group's check (the job's own, tasks/values.GROUPS) as a field's: on a mapping."""
    mapping = _fails(lambda v: isinstance(v, Mapping), "no mapping of its keys")
    return lambda value, key: mapping(value, key) or check(value)


def _source(value: Any) -> bool:
    """Whether `value` names a record in its records folder, `<experiment>/<file>`."""
    parts = value.split("/") if isinstance(value, str) else []
    return len(parts) == 2 and all(map(plain_name, parts))


HASH = re.compile(r"[0-9a-f]{16}")  # a config's hash (hashing.config_hash), a record's file name


def _stack(value: Any) -> bool:
    """Whether `value` is a stack: the keys of the jobs it trained with (job.Job.key), each
    `<experiment>/<config hash>`."""
    keys = [k.split("/") if isinstance(k, str) else [] for k in value]
    return all(len(k) == 2 and plain_name(k[0]) and HASH.fullmatch(k[1]) for k in keys)


# What each field of a record that the tools read must be where given and not null (an older
# record may lack it), by the job's own checks where it has one (checks.py, tasks/values.GROUPS);
# `*`: every key of its mapping. Every text is a printable line besides (`unprintable_keys`).
FIELDS: dict[str, Callable[[Any, str], None]] = {
    "name": _fails(_shown_name, f"no job's name (a text of <= {MAX_TEXT}, no leading / or ..)"),
    "reason": TEXT,
    "git_commit": GIT,
    "started": STAMP,
    "finished": STAMP,
    "reused_from": _fails(_source, "no record's place (<experiment>/<file>)"),
    "overrides": _overrides,
    "stack": _fails(
        lambda v: isinstance(v, list) and _stack(v),
        "no stack (the list of the jobs it trained with, each <experiment>/<16-hex config hash>)",
    ),
    **dict.fromkeys(PATH_FIELDS, _fails(inside, "no path inside its folder (a text with no ..)")),
    "profile": PLAIN,
    "row": PLAIN,
    "config.row": PLAIN,
    "config.experiment_name": PLAIN,
    "config.profile.name": PLAIN,
    "config.profile.max_steps": lambda v, k: integer_in(v, k, 1),
    "config.profile.eval_every": lambda v, k: integer_in(v, k, 0),
    "config.profile.log_every": lambda v, k: integer_in(v, k, 1),
    "config.profile.metrics_tail": lambda v, k: number(v, k, 0.0, open_low=True),
    "config.threads": lambda v, k: integer_in(v, k, 1, checks.MAX_THREADS),
    "config.task.name": PLAIN,
    "config.task.digits": lambda v, k: integer_in(v, k, 1),
    "config.task.validation": fraction,
    "config.kb.name": PLAIN,
    "config.kb.w_dfl": lambda v, k: number(v, k, 0.0, open_low=False),
    "config.optimizer.name": PLAIN,
    "config.optimizer.lr": lambda v, k: number(v, k, 0.0, open_low=True),
    "config.net.name": PLAIN,
    "config.model.ntn_k": checks.layer_width,
    **{f"config.data.{n}": checks.batch_items for n in ("batch_size", "eval_batch_size")},
    "config.trainer.accelerator": PLAIN,
    **{f"config.{kind}.name": PLAIN for kind in KINDS},
    **{f"config.{kind}.*": SCALAR for kind in KINDS},
    **{f"config.{group}": _group(check) for group, check in GROUPS.items()},
}


def _given(record: Mapping[str, Any], dotted: str) -> Iterator[tuple[str, Any]]:
    """Each (dotted key, value) of `record` at `dotted` (`*`: every key) given and not null; a
    parent that is no mapping gives none (migrate.shape_defect names a group of another shape)."""
    nodes: list[tuple[str, Any]] = [("", record)]
    for part in dotted.split("."):
        nodes = [
            (f"{key}.{name}".lstrip("."), value[name])
            for key, value in nodes
            if isinstance(value, Mapping)
            for name in (value if part == "*" else [part] if part in value else [])
        ]
    return iter([(key, value) for key, value in nodes if value is not None])


def unfit(record: Mapping[str, Any], whole: bool = True) -> str | None:
    """Why a field of `record` is not what FIELDS declares, or is no top-level field the schema
    names (schema.named), in one line naming the key, or None; not `whole` (a group's one value,
    as an override sets it): its GROUPS check aside, but for a KEYWISE group's, which judges
    that one value alone.

    >>> unfit({"config": {"optimizer": {"lr": "abc"}, "tnorm": {"name": 5}}})
    "config.optimizer.lr must be a finite number > 0.0, got 'abc'"
    """
    unnamed = next((str(field) for field in record if not named(field)), None)
    if unnamed is not None:
        return f"its field {unnamed!r:.80} is no field of a run record (dfl_bench/schema.py)"
    aside = () if whole else [f"config.{group}" for group in GROUPS if group not in KEYWISE]
    for dotted, check in FIELDS.items():
        for key, value in _given(record, dotted) if dotted not in aside else ():
            try:
                check(value, key)
            except ValueError as err:
                return str(err)
    return None


def one_line(text: str) -> str:
    """`text` as one printable line of at most MAX_TEXT characters (a record's free text)."""
    return "".join(c if c.isprintable() else " " for c in text)[:MAX_TEXT]
