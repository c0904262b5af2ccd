"""Prenex formulas over a batch (Section 4, Definition "val"; Algorithm "real_logic").

A formula is written like the paper, e.g. the first `same` family
``forall x, y: d(x) & d(y) -> same(x, y)`` for each digit d::

    x, y, d = Var("x"), Var("y"), Index("d", 10)
    Family("same/1", Forall((x, y), (digit[d](x) & digit[d](y)) >> same(x, y)), each=d)

(`>>` is the implication; Python binds it tighter than `&`, hence the parentheses).
Evaluation broadcasts instead of looping over groundings: every variable is one tensor dim.
An `Index` is a variable over the constants 0..size-1 (the columns of an indexed predicate such
as `digit`); a family `each` index gives one formula per constant (a leading dim of the result),
and `OrOver`/`AndOver` fold the t-conorm/t-norm over an index inside a formula.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor


class Operators(Protocol):
    """What evaluation needs from an operator set (`dfl_bench.operators.OperatorSet`)."""

    tnorm: Callable[[Tensor, Tensor], Tensor]
    tconorm: Callable[[Tensor, Tensor], Tensor]
    implication: Callable[[Tensor, Tensor], Tensor]
    forall: Callable[..., Tensor]
    exists: Callable[..., Tensor]
    negation: Callable[[Tensor], Tensor]


@dataclass(frozen=True)
class Var:
    """An object variable, ranging over the batch (Eq. "aggrsample")."""

    name: str


@dataclass(frozen=True)
class Index:
    """An index variable over the constants 0..size-1 (e.g. the ten digits)."""

    name: str
    size: int

    def __rsub__(self, k: int) -> IndexExpr:
        return IndexExpr(self, -1, k)

    def __add__(self, k: int) -> IndexExpr:
        return IndexExpr(self, 1, k)


@dataclass(frozen=True)
class IndexExpr:
    """The constant `scale * index + offset` (index None: the constant `offset`)."""

    index: Index | None
    scale: int = 1
    offset: int = 0

    def columns(self) -> list[int]:
        """The column selected for each value of the index, in order."""
        if self.index is None:
            return [self.offset]
        return [self.scale * i + self.offset for i in range(self.index.size)]


class Formula:
    """Base of the AST; `&`, `|`, `~` and `>>` build And, Or, Not and Implies."""

    def __and__(self, other: Formula) -> Formula:
        return And(self, other)

    def __or__(self, other: Formula) -> Formula:
        return Or(self, other)

    def __invert__(self) -> Formula:
        return Not(self)

    def __rshift__(self, other: Formula) -> Formula:
        return Implies(self, other)


@dataclass(frozen=True)
class Predicate:
    """A predicate read from `interp[key]`: shape (b,)*arity, plus (columns,) when indexed."""

    key: str
    arity: int
    columns: tuple[str, ...] | None = None

    def __call__(self, *args: Var) -> Atom:
        return Atom(self, tuple(args))

    def __getitem__(self, column: Index | IndexExpr | int | str) -> _Column:
        return _Column(self, self._column(column))

    def _column(self, column: Index | IndexExpr | int | str) -> IndexExpr:
        if self.columns is None:
            raise ValueError(f"predicate {self.key!r} has no columns to index")
        if isinstance(column, Index):
            return IndexExpr(column)
        if isinstance(column, IndexExpr):
            return column
        if isinstance(column, str):
            if column not in self.columns:
                raise ValueError(f"{self.key} has no column {column!r}; valid: {self.columns}")
            return IndexExpr(None, 0, self.columns.index(column))
        return IndexExpr(None, 0, int(column))


@dataclass(frozen=True)
class _Column:
    """One column (or an index expression over columns) of an indexed predicate."""

    predicate: Predicate
    column: IndexExpr

    def __call__(self, *args: Var) -> Atom:
        return Atom(self.predicate, tuple(args), self.column)


@dataclass(frozen=True)
class Atom(Formula):
    """P(x_1, ..., x_m), Eq. "rlpred"; `column` selects the column of an indexed predicate."""

    predicate: Predicate
    args: tuple[Var, ...]
    column: IndexExpr | None = None


@dataclass(frozen=True)
class Not(Formula):
    """N(phi), Eq. "rlneg"."""

    body: Formula


@dataclass(frozen=True)
class And(Formula):
    """T(phi, psi), Eq. "rlconj"."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class Or(Formula):
    """S(phi, psi) (Definition "val")."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class Implies(Formula):
    """I(phi, psi), Eq. "rlimp"; its antecedent/consequent feed the metrics of Section 9.1."""

    antecedent: Formula
    consequent: Formula


@dataclass(frozen=True)
class OrOver(Formula):
    """The t-conorm folded over every constant of `index`: S(body[0], ..., body[n-1])."""

    index: Index
    body: Formula


@dataclass(frozen=True)
class AndOver(Formula):
    """The t-norm folded over every constant of `index`: T(body[0], ..., body[n-1])."""

    index: Index
    body: Formula


@dataclass(frozen=True)
class Forall(Formula):
    """forall vars: body, one aggregation A over all groundings of `vars` (Eq. "aggrsample")."""

    vars: tuple[Var, ...]
    body: Formula


@dataclass(frozen=True)
class Exists(Formula):
    """exists vars: body, one aggregation E over all groundings of `vars` (Eq. "rleaggr")."""

    vars: tuple[Var, ...]
    body: Formula


Quantifier = Forall | Exists


@dataclass(frozen=True)
class Family:
    """A named formula, or one formula per constant of `each` (e.g. "same/1", ten formulas)."""

    name: str
    formula: Formula
    each: Index | None = None

    @property
    def size(self) -> int:
        """Number of formulas in the family."""
        return 1 if self.each is None else self.each.size

    @property
    def quantified(self) -> tuple[Var, ...]:
        """The object variables, outermost first."""
        return tuple(v for q in _prefix(self.formula)[0] for v in q.vars)

    def groundings(self, b: int) -> int:
        """Instances of each formula of the family on a batch of b objects: b ** #variables."""
        return b ** len(self.quantified)


def _prefix(formula: Formula) -> tuple[list[Quantifier], Formula]:
    """Split a prenex formula into its quantifier prefix (outermost first) and its matrix."""
    quantifiers: list[Quantifier] = []
    while isinstance(formula, Forall | Exists):
        quantifiers.append(formula)
        formula = formula.body
    return quantifiers, formula


def _children(node: Formula) -> tuple[Formula, ...]:
    if isinstance(node, Not | OrOver | AndOver):
        return (node.body,)
    if isinstance(node, And | Or):
        return (node.left, node.right)
    if isinstance(node, Implies):
        return (node.antecedent, node.consequent)
    if isinstance(node, Forall | Exists):
        raise ValueError(f"formula is not prenex: a quantifier over {node.vars} sits inside")
    return ()


@dataclass(frozen=True)
class Compiled:
    """A validated family with its frame: the tensor dim of every variable."""

    family: Family
    quantifiers: tuple[Quantifier, ...]
    matrix: Formula
    frame: tuple[Var | Index, ...]

    @property
    def n_folds(self) -> int:
        return sum(isinstance(v, Index) for v in self.frame) - (self.family.each is not None)


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
        folds.append(node.index)
        bound = bound | {node.index}
    for child in _children(node):
        _walk(child, bound, folds)


def compile_family(family: Family) -> Compiled:
    """Validate a family (prenex, every variable bound once) and fix its frame."""
    quantifiers, matrix = _prefix(family.formula)
    variables = family.quantified
    if len(set(variables)) != len(variables):
        raise ValueError(f"{family.name}: a variable is quantified twice")
    bound: set[Var | Index] = set(variables) | ({family.each} if family.each else set())
    folds: list[Index] = []
    _walk(matrix, bound, folds)
    lead = (family.each,) if family.each is not None else ()
    return Compiled(family, tuple(quantifiers), matrix, (*lead, *variables, *folds))


class _Evaluation:
    """One pass of Definition "val" over a batch; `record` keeps each implication's inputs."""

    def __init__(
        self,
        compiled: Compiled,
        interp: Mapping[str, Tensor],
        ops: Operators,
        b: int,
        record: list[tuple[Tensor, Tensor]] | None,
    ) -> None:
        self.frame = compiled.frame
        self.pos = {v: i for i, v in enumerate(compiled.frame)}
        self.sizes = [b if isinstance(v, Var) else v.size for v in compiled.frame]
        self.interp = interp
        self.ops = ops
        self.record = record

    def atom(self, atom: Atom) -> Tensor:
        t = self.interp[atom.predicate.key]
        owners: list[Var | Index] = list(atom.args)
        if atom.column is not None:
            cols = atom.column.columns()
            if atom.column.index is None:
                t = t[..., cols[0]]
            else:
                owners.append(atom.column.index)
                if cols != list(range(t.shape[-1])):
                    t = t[..., torch.tensor(cols, device=t.device)]
        order = sorted(range(len(owners)), key=lambda i: self.pos[owners[i]])
        t = t.permute(order)
        shape = [1] * len(self.frame)
        for j, i in enumerate(order):
            shape[self.pos[owners[i]]] = t.shape[j]
        return t.reshape(shape)

    def fold(self, op: Callable[[Tensor, Tensor], Tensor], node: OrOver | AndOver) -> Tensor:
        dim = self.pos[node.index]
        t = self(node.body)
        shape = list(t.shape)
        shape[dim] = node.index.size
        terms = t.expand(shape).unbind(dim)
        acc = terms[0]
        for term in terms[1:]:
            acc = op(acc, term)
        return acc.unsqueeze(dim)

    def implies(self, node: Implies) -> Tensor:
        a, c = self(node.antecedent), self(node.consequent)
        if self.record is not None:
            a, c = a.view_as(a), c.view_as(c)
            self.record.append((a, c))
        return self.ops.implication(a, c)

    def __call__(self, node: Formula) -> Tensor:
        ops = self.ops
        if isinstance(node, Atom):
            return self.atom(node)
        if isinstance(node, Not):
            return ops.negation(self(node.body))
        if isinstance(node, And):
            return ops.tnorm(self(node.left), self(node.right))
        if isinstance(node, Or):
            return ops.tconorm(self(node.left), self(node.right))
        if isinstance(node, Implies):
            return self.implies(node)
        if isinstance(node, OrOver):
            return self.fold(ops.tconorm, node)
        if isinstance(node, AndOver):
            return self.fold(ops.tnorm, node)
        raise ValueError(f"cannot evaluate {type(node).__name__}")


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
    """Valuation of each formula of a family: shape (family.size,) (Algorithm "real_logic")."""
    ev = _Evaluation(compiled, interp, ops, batch_size(interp), record)
    keep = ev.sizes[: len(ev.sizes) - compiled.n_folds]
    t = ev(compiled.matrix).expand([*keep, *[1] * compiled.n_folds]).reshape(keep)
    for q in reversed(compiled.quantifiers):
        n = len(q.vars)
        dim = -1 if n == 1 else tuple(range(-n, 0))
        t = (ops.forall if isinstance(q, Forall) else ops.exists)(t, dim=dim)
    return t.reshape(compiled.family.size)
