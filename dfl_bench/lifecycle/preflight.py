"""The command line checked before Hydra runs it: a choice that does not exist or an override
Hydra cannot apply is one line naming the valid choices (exit 2), not Hydra's error block.

    python -m dfl_bench tnorm=no_such
    [dfl_bench] invalid configuration: tnorm=no_such: no such tnorm; valid choices: [...]
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Sequence
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException
from omegaconf import OmegaConf

from dfl_bench.lifecycle.declared import declaration_refusal
from dfl_bench.lifecycle.guards import check_name, recommended_refusal, row_owner, row_refusal
from dfl_bench.lifecycle.private_api import hydra_args_parser
from dfl_bench.lifecycle.resolve import HYDRA_RESOLVERS, RESOLVERS, check_resolvers
from dfl_bench.paths import CONFIG_DIR

NAMES = ("experiment_name", "row")  # values that name folders (guards.check_name)

# Flags that print something instead of running a job: Hydra answers them itself.
INFO_FLAGS = ("help", "hydra_help", "cfg", "info", "shell_completion", "resolve")
# Where a `_target_` set on the command line may point: our packages, Hydra's own plugins and
# Lightning's loggers (an override is untrusted: `hydra.callbacks.x._target_=os.system` or
# `+logger._target_=os.system` would run a command when Hydra or the job builds it).
TRUSTED_TARGETS = ("dfl_bench.", "hydra_plugins.", "hydra._internal.core_plugins.",
                   "lightning.pytorch.loggers.")  # fmt: skip


def untrusted_target(override) -> str | None:
    """Why an override's `_target_` may not be built (one line), or None."""
    if "_target_" not in override.input_line:
        return None
    value = None if override.is_sweep_override() else override.value()
    if isinstance(value, str) and value.startswith(TRUSTED_TARGETS):
        return None
    return (
        f"{override.input_line}: a _target_ from the command line must name code of "
        f"{', '.join(p.rstrip('.') for p in TRUSTED_TARGETS)}"
    )


def resolver_defect(override: Override) -> str | None:
    """Why an override calls a resolver it may not, in any spelling Hydra unescapes (one line
    naming its key, never its value), or None: the job's rule (resolve.check_resolvers) before
    Hydra makes a folder, `hydra.run.dir=/x/${oc.env:SECRET}` too (Hydra's keys may call
    HYDRA_RESOLVERS as well: `${now:...}`)."""
    key = override.key_or_group.lstrip("+~")
    own = key == "hydra" or key.startswith(("hydra.", "hydra/"))
    text = re.sub(r"\\(.)", r"\1", override.input_line)  # `$\{oc.env\:X\}` is `${oc.env:X}`
    try:
        check_resolvers(text, key, RESOLVERS + HYDRA_RESOLVERS if own else RESOLVERS)
    except ValueError as err:
        return str(err)
    return None


def override_defect(override: Override) -> str | None:
    """Why one parsed override cannot start a job (one line), or None: a resolver it may not
    call, a `recommended/<kind>` group (guards.recommended_refusal), a run folder's name that
    is not one, an untrusted `_target_`, a swept experiment."""
    called = resolver_defect(override) or recommended_refusal(override.input_line)
    if called is not None:
        return called
    if override.key_or_group in NAMES and not override.is_sweep_override():
        try:  # it names the run's folders: Hydra makes them before a job starts
            check_name(override.value(), override.key_or_group)
        except ValueError as err:
            return str(err)
    refused = untrusted_target(override)
    if refused is not None:
        return refused
    if override.key_or_group == "experiment" and override.is_sweep_override():
        return (
            f"{override.input_line}: one experiment per command (each has its own sweep of "
            "rows); run them one after the other, or `make reproduce-tables TABLES=a,b`"
        )
    return None


def escaped(text: str) -> str:
    """`text` with every character that is not printable written as its Python escape, so that
    a command line's value prints as one line and no terminal escape reaches the terminal.

    >>> print(escaped("kb=x\\x1b]0;PWN\\x07"))
    kb=x\\x1b]0;PWN\\x07
    """
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def defect(argv: Sequence[str]) -> str | None:
    """Why `python -m dfl_bench ARGV` cannot start (one printable line, `escaped`), or None."""
    why = _defect(argv)
    return None if why is None else escaped(why)


def _defect(argv: Sequence[str]) -> str | None:
    """Why `python -m dfl_bench ARGV` cannot start, or None."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            args = hydra_args_parser().parse_args(list(argv))
    except SystemExit:
        return None  # a usage error of Hydra's own flags: Hydra prints it
    if any(getattr(args, flag, None) for flag in INFO_FLAGS):
        return None
    try:
        parsed = OverridesParser.create().parse_overrides(list(args.overrides))
    except OverrideParseException as err:
        return unparsed(err)
    for override in parsed:
        wrong = override_defect(override)
        if wrong is not None:
            return wrong
    first = [o.input_line for o in parsed if not o.is_sweep_override()]
    sweeps = [o for o in parsed if o.is_sweep_override()]
    config_dir = args.config_dir or CONFIG_DIR
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(str(config_dir), version_base="1.3"):
            loader = GlobalHydra.instance().config_loader()
            for override in sweeps:  # each value of a swept config group exists
                group = override.key_or_group.lstrip("+~")
                exists = loader.repository.group_exists(group)
                options = loader.get_group_options(group) if exists else None
                for value in override.sweep_string_iterator() if options is not None else ():
                    if value not in options:
                        return f"{group}={value}: no such {group}; valid choices: {options}"
            for override in parsed:
                valueless = group_value_defect(override, loader)
                if valueless is not None:
                    return valueless
            owned = row_owned(args.config_name or "config", parsed)
            if owned is not None:  # `++tnorm.p=3` too, which would replace the row's operator
                return owned
            compose(args.config_name or "config", overrides=first)
    except MissingConfigException as err:
        group, _, value = str(err.missing_cfg_file or "").rpartition("/")
        return f"{group}={value}: no such {group}; valid choices: {list(err.options or [])}"
    except ConfigCompositionException as err:
        return " ".join(str(err).split())
    finally:
        GlobalHydra.instance().clear()
    return None


def group_value_defect(override: Override, loader: Any) -> str | None:
    """Why an override gives a config group no option's name (`tnorm=null`, `tnorm=1`, `~tnorm=1`:
    Hydra's defaults list raises a plain ValueError, a traceback, for them), in
    one line; or None (a mapping sets the group's keys; a sweep's values are checked above)."""
    group = override.key_or_group
    if override.is_sweep_override() or not loader.repository.group_exists(group):
        return None
    value = override.value()
    named = (str, type(None)) if override.is_delete() else (str, list)  # what Hydra takes
    if isinstance(value, (dict, *named)):
        return None
    return (
        f"{override.input_line}: {group} is a config group: give one of its options; valid "
        f"choices: {loader.get_group_options(group)}"
    )


def unparsed(err: OverrideParseException) -> str:
    """Why an override that Hydra cannot parse is refused (one line)."""
    return (
        f"{str(err).splitlines()[0]}: an override that does not parse (quote a value with "
        "characters other than letters, digits and _-+./: key='...')"
    )


def row_owned(config_name: str, parsed: Sequence) -> str | None:
    """Why an override cannot apply: it sets a value the experiment takes from its row
    (`tnorm.p=3` under `row=yager_p2`: `tnorm` is `${rows[${row}].tnorm}`; `guards.row_owner`,
    the rule each job's check applies too); None when there is none."""
    chosen = [
        o.input_line
        for o in parsed
        if not o.is_sweep_override()
        and (
            o.key_or_group.lstrip("+~") in ("experiment", "row")
            or o.key_or_group.startswith("hydra.")
        )
    ]
    if not any(o.key_or_group.lstrip("+~") == "experiment" for o in parsed):
        return None
    try:
        raw = OmegaConf.to_container(compose(config_name, overrides=chosen), resolve=False)
    except (ConfigCompositionException, MissingConfigException):
        return None  # the whole command line's composition names what is wrong
    for override in parsed:
        top = override.key_or_group.lstrip("+~").split(".")[0]
        if top in ("experiment", "row") or override.is_sweep_override():
            continue
        declared = declaration_refusal(raw, override.key_or_group, override.input_line)
        if declared is not None:
            return declared
        owned = row_owner(raw, override.key_or_group)
        if owned is not None:
            loader = GlobalHydra.instance().config_loader()
            group = override.key_or_group.lstrip("+~")
            if "." not in group and loader.repository.group_exists(group):
                options = loader.get_group_options(group)
                chosen = override.value()  # an option's name, or a mapping of the group's values
                if isinstance(chosen, str) and chosen not in options:  # said before the row
                    return f"{group}={chosen}: no such {group}; valid choices: {options}"
            return row_refusal(override.input_line, raw, owned)
    return None
