"""Where an experiment's values come from: the paper, the authors' code, or our choice.

An experiment yaml may hold `provenance: {<dotted config key>: {source: ..., note: ...}}` and
`row_provenance: {<row>: {<dotted key>: {source: ..., note: ...}}}`; a job's resolved config
carries `provenance` = the experiment's entries updated by its row's (docs/fidelity.md). It is
not hashed: it describes a configuration, it does not change the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SOURCES = ("paper", "authors' code", "our choice")


def _has_key(config: Mapping[str, Any], dotted: str) -> bool:
    """Whether `config` holds the dotted key (e.g. "kb.w_dfl")."""
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _checked(entries: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The entries as plain dicts; a bad source, a missing note or an unknown key raises."""
    out = {}
    for key, entry in entries.items():
        if not _has_key(config, key):
            raise ValueError(f"provenance names {key!r}, which is not a key of the job's config")
        if not isinstance(entry, Mapping) or entry.get("source") not in SOURCES:
            raise ValueError(f"provenance of {key!r} needs a source; valid choices: {SOURCES}")
        if not isinstance(entry.get("note"), str) or not entry["note"]:
            raise ValueError(f"provenance of {key!r} needs a note (where the value comes from)")
        out[key] = {"source": entry["source"], "note": entry["note"]}
    return out


def job_provenance(
    provenance: Mapping[str, Any] | None,
    row_provenance: Mapping[str, Any] | None,
    row: str | None,
    config: Mapping[str, Any],
) -> dict[str, dict[str, str]]:
    """The experiment's provenance updated by the entries of `row` (checked against `config`)."""
    merged = dict(provenance or {})
    merged.update((row_provenance or {}).get(row) or {})
    return _checked(merged, config)
