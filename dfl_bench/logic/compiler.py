"""Compile prenex formulas into batched tensor programs (Definition "val"; Algorithm "real_logic").

Evaluation broadcasts instead of looping over groundings: every variable is one tensor dim.
Quantifier scope of a family with `each` (`SCOPES`): "formula" (the paper's text, Section 9.2:
ten formulas, one universal aggregation each) or "family" (the paper's code: the outermost
universal aggregation also runs over the family index, one A over all its instances).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from torch import Tensor

from dfl_bench.kinds import SCOPES
from dfl_bench.logic.formulas import (
    And,
    AndOver,
    Atom,
    Family,
    Forall,
    Formula,
    Implies,
    Index,
    IndexExpr,
    Not,
    OrOver,
    Quantifier,
    Var,
    children,
    prefix,
)


class Operators(Protocol):
    """What evaluation needs from an operator set (`dfl_bench.operators.OperatorSet`)."""

    tnorm: Callable[[Tensor, Tensor], Tensor]
    tconorm: Callable[[Tensor, Tensor], Tensor]
    implication: Callable[[Tensor, Tensor], Tensor]
    forall: Callable[..., Tensor]
    exists: Callable[..., Tensor]
    negation: Callable[[Tensor], Tensor]


def _check_atom(atom: Atom, bound: set[Var | Index]) -> None:
    p = atom.predicate
    if len(atom.args) != p.arity:
        raise ValueError(f"{p.key} takes {p.arity} arguments, got {len(atom.args)}")
    if len(set(atom.args)) != len(atom.args):
        raise ValueError(f"{p.key}{atom.args}: a repeated variable is not supported")
    free = [v for v in atom.args if v not in bound]
    if free:
        raise ValueError(f"{p.key}: variables {free} are not quantified")
    if (atom.column is None) != (p.columns is None):
        raise ValueError(f"{p.key}: give a column exactly when the predicate has columns")
    if atom.column is not None:
        if atom.column.index is not None and atom.column.index not in bound:
            raise ValueError(f"{p.key}: index {atom.column.index.name!r} is not bound")
        bad = [c for c in atom.column.columns() if not 0 <= c < len(p.columns)]
        if bad:
            raise ValueError(f"{p.key}: columns {bad} out of range 0..{len(p.columns) - 1}")


def _walk(node: Formula, bound: set[Var | Index], folds: list[Index]) -> None:
    """Validate the matrix and collect its fold indices in order of appearance."""
    if isinstance(node, Atom):
        _check_atom(node, bound)
        return
    if isinstance(node, OrOver | AndOver):
        if node.index in bound:
            raise ValueError(f"index {node.index.name!r} is bound twice")
        if node.index not in folds:
            folds.append(node.index)
        bound = bound | {node.index}
    for child in children(node):
        _walk(child, bound, folds)


@dataclass
class Context:
    """What one evaluation reads: the interpretation and operators, and what it fills."""

    interp: Mapping[str, Tensor]
    ops: Operators
    record: list[tuple[Tensor, Tensor]] | None = None
    cache: dict = field(default_factory=dict)


Node = Callable[[Context], Tensor]


def _select_columns(t: Tensor, column: IndexExpr) -> Tensor:
    """t[..., scale * i + offset] for i < index.size as a strided view (flipped when scale < 0)."""
    n, step, start = column.index.size, abs(column.scale), column.offset
    if column.scale < 0:
        t, start = t.flip(-1), t.shape[-1] - 1 - column.offset
    if step == 0:
        return t[..., start : start + 1].expand(*t.shape[:-1], n)
    return t[..., start : start + step * (n - 1) + 1 : step]


def _place(t: Tensor, dims: tuple[int, ...], rank: int) -> Tensor:
    """View t (its dim i belongs at frame dim dims[i]) at the frame's rank, size 1 elsewhere."""
    order = sorted(range(len(dims)), key=dims.__getitem__)
    if order != list(range(len(dims))):
        t = t.permute(order)
    shape = [1] * rank
    for j, i in enumerate(order):
        shape[dims[i]] = t.shape[j]
    return t if list(t.shape) == shape else t.reshape(shape)


def _atom(atom: Atom, pos: Mapping[Var | Index, int], rank: int) -> Node:
    """Eq. "rlpred": the ground atoms of `interp[key]`, placed at their variables' dims."""
    column, key = atom.column, atom.predicate.key
    indexed = column is not None and column.index is not None
    dims = tuple(pos[o] for o in (*atom.args, *((column.index,) if indexed else ())))
    cache_key = (key, column, dims, rank)

    def atom_node(ctx: Context) -> Tensor:
        t = ctx.cache.get(cache_key)
        if t is None:
            t = ctx.interp[key]
            if column is not None:
                t = _select_columns(t, column) if indexed else t[..., column.offset]
            t = ctx.cache[cache_key] = _place(t, dims, rank)
        return t

    return atom_node


def _fold(node: OrOver | AndOver, body: Node, dim: int) -> Node:
    """S (OrOver) or T (AndOver) folded left over the index's dim; the dim stays, at size 1."""
    size = node.index.size

    def fold_node(ctx: Context) -> Tensor:
        op = ctx.ops.tconorm if isinstance(node, OrOver) else ctx.ops.tnorm
        t = body(ctx)
        shape = list(t.shape)
        shape[dim] = size
        terms = t.expand(shape).unbind(dim)
        acc = terms[0]
        for term in terms[1:]:
            acc = op(acc, term)
        return acc.unsqueeze(dim)

    return fold_node


def _graph_node(t: Tensor) -> Tensor:
    """t as its own autograd node; a leaf when t has no graph (it reads only constants)."""
    return t.view_as(t) if t.requires_grad else t.detach().requires_grad_()


def _implies(antecedent: Node, consequent: Node) -> Node:
    """Eq. "rlimp"; with a record, each side is its own graph node, kept for the metrics."""

    def implies_node(ctx: Context) -> Tensor:
        a, c = antecedent(ctx), consequent(ctx)
        if ctx.record is not None:
            a, c = _graph_node(a), _graph_node(c)
            ctx.record.append((a, c))
        return ctx.ops.implication(a, c)

    return implies_node


def _node(node: Formula, pos: Mapping[Var | Index, int], rank: int) -> Node:
    """Compile a quantifier-free formula into a function of the evaluation context."""
    if isinstance(node, Atom):
        return _atom(node, pos, rank)
    parts = [_node(child, pos, rank) for child in children(node)]
    if isinstance(node, OrOver | AndOver):
        return _fold(node, parts[0], pos[node.index])
    if isinstance(node, Implies):
        return _implies(*parts)
    if isinstance(node, Not):
        (body,) = parts
        return lambda ctx: ctx.ops.negation(body(ctx))
    left, right = parts
    if isinstance(node, And):
        return lambda ctx: ctx.ops.tnorm(left(ctx), right(ctx))
    return lambda ctx: ctx.ops.tconorm(left(ctx), right(ctx))


@dataclass(frozen=True)
class Compiled:
    """A validated family compiled for its frame (the tensor dim of every variable):
    fold indices first, then the family index, then the object variables outermost first."""

    family: Family
    frame: tuple[Var | Index, ...]
    n_folds: int
    matrix: Node
    quantifiers: tuple[tuple[bool, int | tuple[int, ...]], ...]
    size: int

    def __call__(self, ctx: Context, b: int) -> Tensor:
        """Valuation of each formula of the family, shape (size,) (Definition "val"): size is
        family.size, or 1 when the scope is "family" (one aggregation over all instances)."""
        keep = [b if isinstance(v, Var) else v.size for v in self.frame[self.n_folds :]]
        full = [*[1] * self.n_folds, *keep]
        t = self.matrix(ctx)
        t = t if list(t.shape) == full else t.expand(full)
        t = t if self.n_folds == 0 else t.reshape(keep)
        for is_forall, dim in self.quantifiers:
            t = (ctx.ops.forall if is_forall else ctx.ops.exists)(t, dim=dim)
        return t if t.dim() == 1 else t.reshape(self.size)


def _family_scope(
    family: Family,
    quantifiers: list[Quantifier],
    reductions: list[tuple[bool, int | tuple[int, ...]]],
) -> None:
    """Widen the outermost (universal) aggregation to the family index, the dim before it."""
    if not quantifiers or not isinstance(quantifiers[0], Forall):
        raise ValueError(
            f"{family.name}: scope 'family' aggregates the family index with an outermost "
            f"universal quantifier, which this family lacks; use scope 'formula'"
        )
    reductions[-1] = (True, tuple(range(-(len(quantifiers[0].vars) + 1), 0)))


def compile_family(family: Family, scope: str = "family") -> Compiled:
    """Validate a family (prenex, every variable bound once) and fix its frame and scope."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; valid choices: {list(SCOPES)}")
    quantifiers, matrix = prefix(family.formula)
    variables = family.quantified
    if len(set(variables)) != len(variables):
        raise ValueError(f"{family.name}: a variable is quantified twice")
    bound: set[Var | Index] = set(variables) | ({family.each} if family.each else set())
    folds: list[Index] = []
    _walk(matrix, bound, folds)
    lead = (family.each,) if family.each is not None else ()
    frame = (*folds, *lead, *variables)
    pos = {v: i for i, v in enumerate(frame)}
    reductions = [
        (isinstance(q, Forall), -1 if len(q.vars) == 1 else tuple(range(-len(q.vars), 0)))
        for q in reversed(quantifiers)
    ]
    size = family.size
    if scope == "family" and family.each is not None:
        _family_scope(family, quantifiers, reductions)
        size = 1
    node = _node(matrix, pos, len(frame))
    return Compiled(family, frame, len(folds), node, tuple(reductions), size)


def batch_size(interp: Mapping[str, Tensor]) -> int:
    """The number of objects b in an interpretation; every tensor must agree."""
    sizes = {k: v.shape[0] for k, v in interp.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"interpretation tensors disagree on the batch size: {sizes}")
    return next(iter(sizes.values()))


def evaluate(
    compiled: Compiled,
    interp: Mapping[str, Tensor],
    ops: Operators,
    record: list[tuple[Tensor, Tensor]] | None = None,
) -> Tensor:
    """Valuation of each formula of a family: shape (family.size,) (Algorithm "real_logic");
    `record` collects each implication's (antecedent, consequent)."""
    return compiled(Context(interp, ops, record), batch_size(interp))
