"""A claim decided (framework.py holds what it reads): `evaluate` runs its check in two steps
(its comparisons declared, then decided after Holm), `decisive_level` the p of the tests that
decide it, `one_reading` one reading per comparison across claims, `across_claims`
Benjamini-Hochberg over the claims' verdicts and `contradictions` any two readings left."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace

from campaign.report.claims.framework import (
    HOLM,
    INCONCLUSIVE,
    VERDICTS,
    Claim,
    Family,
    NotMeasurable,
    Verdict,
    View,
)
from dfl_bench.results import stats


def evaluate(item: Claim, view: View, floor: Mapping[tuple, Reading] | None = None) -> Verdict:
    """Run one claim on one view in two steps, never more: it declares its comparisons (a first
    run, each decided alone), then it is decided once by their Holm-adjusted p-values. A
    comparison met only when deciding (a branch a Holm decision opened) is decided by
    Bonferroni over the family with it, and the verdict says how many there were. `floor`: a
    comparison another claim reads too is decided at no smaller p-values than it reads there
    (`one_reading`), and the verdict names that claim."""
    family = Family()
    looked = replace(view, family=family)
    try:
        item.check(looked)
        declared = len(family.raw)
        family.adjust()
        read_elsewhere = _floored(family, floor or {})
        holds, detail = item.check(looked)
    except NotMeasurable as err:
        return Verdict("not measurable", str(err))
    if len(family.raw) > declared:
        detail += (
            f" [{len(family.raw) - declared} comparison(s) met only when deciding: Bonferroni "
            f"over the {len(family.raw)}]"
        )
    status = {True: "holds", False: "fails", None: INCONCLUSIVE}[holds]
    if holds is None:
        p = None
    elif family.correlations:  # a correlation's claim: the weakest decided test it rests on
        p = max(family.decided, default=0.0)
    else:
        p = decisive_level(item, view, family, holds)
    if len(family.raw) > 1:
        detail += f" [Holm over {len(family.raw)} comparisons]"
    if read_elsewhere:
        detail += f" [one comparison, one reading: {'; '.join(read_elsewhere)}]"
    adjusted = family.adjusted or {}
    comparisons = tuple(
        (key, raw.adjusted_to(adjusted[key], correction=HOLM) if key in adjusted else raw)
        for key, raw in family.raw.items()
    )
    return Verdict(status, detail, p, comparisons=comparisons)


Reading = tuple[tuple[float, float, float], str]  # adjusted p-values, and whose reading they are


def canonical(key: tuple) -> tuple:
    """A comparison's key with its two cells in one order (a difference's p-values do not
    depend on which cell comes first)."""
    if key[0] != "interval":
        return key
    _, a, b, column = key
    return ("interval", *sorted((a, b)), column)


def _floored(family: Family, floor: Mapping[tuple, Reading]) -> list[str]:
    """Raise the family's adjusted p-values of each comparison in `floor` to the reading there
    (never lower them); the lines that say which comparisons moved and whose reading they took."""
    moved = []
    for key, own in (family.adjusted or {}).items():
        if canonical(key) not in floor:
            continue
        p, whose = floor[canonical(key)]
        raised = tuple(max(a, b) for a, b in zip(own, p, strict=True))
        if raised != own:
            family.adjusted[key] = raised  # type: ignore[index]
            _, a, b, column = key
            moved.append(f"{'/'.join(a)} - {'/'.join(b)} ({column}) read as {whose} reads it")
    return moved


def one_reading(view: View, items: Sequence[Claim]) -> list[Verdict]:
    """The claims on one view, every comparison read one way: where measured claims read one
    comparison differently (each after its own family's correction), it is decided in each of
    them at the largest adjusted p-values any of them reads it at (its largest family's: the
    reading no claim's smaller family may overturn), and those claims are decided again."""
    first = [evaluate(item, view) for item in items]
    reads: dict[tuple, dict[str, stats.Interval]] = {}
    for item, verdict in zip(items, first, strict=True):
        if verdict.status == VERDICTS[-1]:
            continue
        for key, interval in verdict.comparisons:
            if key[0] == "interval":
                reads.setdefault(canonical(key), {})[item.name] = interval
    floor: dict[tuple, Reading] = {}
    for key, by_claim in reads.items():
        if len({i.word for i in by_claim.values()}) > 1:
            ps = {name: i.adjusted or i.raw for name, i in by_claim.items()}
            name = max(ps, key=lambda n: ps[n][0])  # the largest family's, as a rule
            family = next(len(v.comparisons) for i, v in zip(items, first, strict=True)
                          if i.name == name)  # fmt: skip
            strictest = tuple(max(p[k] for p in ps.values()) for k in range(3))
            floor[key] = (strictest, f"`{name}` (of {family})")  # type: ignore[assignment]
    touched = {n for key in floor for n in reads[key]}
    return [
        evaluate(item, view, floor) if item.name in touched else verdict
        for item, verdict in zip(items, first, strict=True)
    ]


def decisive_level(item: Claim, view: View, family: Family, holds: bool) -> float:
    """The p of the tests that decide a claim's verdict: the smallest level at which, with only
    its comparisons whose Holm-adjusted p is up to that level decided, the claim comes out the
    same (0 for a verdict that rests on a fact, no test: a ratio defined where the claim says
    it is not; the largest adjusted p of the comparisons a holding claim needs; the smallest of
    those that make a failing one fail, not of a comparison it won)."""
    for level in sorted({0.0, *family.decided}):
        capped = Family(raw=dict(family.raw), adjusted=family.adjusted, level=level)
        try:
            if item.check(replace(view, family=capped))[0] is holds:
                return level
        except NotMeasurable:
            continue
    return max(family.decided, default=0.0)


ACROSS = {"Benjamini-Hochberg": stats.benjamini_hochberg, "Holm": stats.holm}


def across_claims(
    verdicts: Sequence[Verdict], correction: str = "Benjamini-Hochberg"
) -> list[Verdict]:
    """Benjamini-Hochberg across the measurable claims (FDR stats.FDR; an inconclusive claim
    counts with p = 1): a decided claim whose adjusted p-value (q) is not below the rate becomes
    inconclusive, saying so. `correction="Holm"`: the family-wise rule instead (the
    sensitivity table's variation; nothing is decided by it)."""
    tested = [i for i, v in enumerate(verdicts) if v.status != VERDICTS[-1]]
    ps = [verdicts[i].p if verdicts[i].p is not None else 1.0 for i in tested]
    out = list(verdicts)
    for i, q in zip(tested, ACROSS[correction](ps), strict=True):
        v = verdicts[i]
        if v.status == INCONCLUSIVE or q < stats.FDR:
            out[i] = replace(v, q=q)
        else:
            out[i] = replace(
                v,
                status=INCONCLUSIVE,
                q=q,
                detail=f"{v.detail} [{v.status} before {correction} across claims: q = {q:.3f}]",
            )
    return out


FLIPPED = {
    "above": "below", "below": "above", "equivalent": "equivalent", "inconclusive": "inconclusive"
}  # fmt: skip


def contradictions(verdicts: Mapping[str, Verdict]) -> list[str]:
    """Pairs of measured claims (by name, whatever their verdict) that read one comparison (two
    cells and a column, in either order) differently (above / below / equivalent /
    inconclusive, each after its own claim's correction, the size of whose family is named):
    one line each; none where every claim reads each comparison alike."""
    reads: dict[tuple, dict[str, str]] = {}
    for name, verdict in verdicts.items():
        if verdict.status == VERDICTS[-1]:  # not measurable: it read nothing
            continue
        family = len(verdict.comparisons)
        for key, interval in verdict.comparisons:
            word = interval.word
            if key[0] != "interval" or word not in FLIPPED:
                continue
            _, a, b, column = key
            if (b, a) < (a, b):
                a, b, word = b, a, FLIPPED[word]
            reads.setdefault((a, b, column), {})[name] = f"{word} (of {family})"
    out = []
    for (a, b, column), words in reads.items():
        for (first, one), (second, other) in itertools.combinations(words.items(), 2):
            if one.split(" (")[0] != other.split(" (")[0]:
                cells = f"{'/'.join(a)} - {'/'.join(b)} ({column})"
                out.append(f"`{first}` reads {cells} as {one}, `{second}` as {other}")
    return out
