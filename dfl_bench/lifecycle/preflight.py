"""The command line checked before Hydra runs it: a choice that does not exist or an override
Hydra cannot apply is one line naming the valid choices (exit 2), not Hydra's error block.

    python -m dfl_bench tnorm=no_such
    [dfl_bench] invalid configuration: tnorm=no_such: no such tnorm; valid choices: [...]
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence

from hydra import compose, initialize_config_dir
from hydra._internal.utils import get_args_parser
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException

from dfl_bench.paths import CONFIG_DIR

# Flags that print something instead of running a job: Hydra answers them itself.
INFO_FLAGS = ("help", "hydra_help", "cfg", "info", "shell_completion", "resolve")


def renamed(line: str) -> str:
    """An override of the old `problem` group in today's names (`problem.kb.scope=formula` is
    `kb.scope=formula`, `problem=sum9` is `kb=sum9`)."""
    prefix = line[: len(line) - len(line.lstrip("+~"))]
    rest = line[len(prefix) :].removeprefix("problem")
    return f"{prefix}kb{rest.removeprefix('.kb')}"


def defect(argv: Sequence[str]) -> str | None:
    """Why `python -m dfl_bench ARGV` cannot start (one line), or None."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            args = get_args_parser().parse_args(list(argv))
    except SystemExit:
        return None  # a usage error of Hydra's own flags: Hydra prints it
    if any(getattr(args, flag, None) for flag in INFO_FLAGS):
        return None
    try:
        parsed = OverridesParser.create().parse_overrides(list(args.overrides))
    except OverrideParseException as err:
        return str(err).splitlines()[0]
    for override in parsed:
        if override.key_or_group.lstrip("+~").split(".")[0] == "problem":
            return (
                f"{override.input_line}: the `problem` group is now `kb` (the knowledge base "
                f"and its DFL weight): {renamed(override.input_line)}"
            )
        if override.key_or_group == "experiment" and override.is_sweep_override():
            return (
                f"{override.input_line}: one experiment per command (each has its own sweep of "
                "rows); run them one after the other, or `make reproduce-tables TABLES=a,b`"
            )
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
            compose(args.config_name or "config", overrides=first)
    except MissingConfigException as err:
        group, _, value = str(err.missing_cfg_file or "").rpartition("/")
        return f"{group}={value}: no such {group}; valid choices: {list(err.options or [])}"
    except ConfigCompositionException as err:
        return " ".join(str(err).split())
    finally:
        GlobalHydra.instance().clear()
    return None
