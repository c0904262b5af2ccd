"""The syntax of prenex formulas (Section 4, Definition "val"); `compiler` evaluates them.

A formula is written like the paper, e.g. the first `same` family
``forall x, y: d(x) & d(y) -> same(x, y)`` for each digit d:

>>> x, y, d = Var("x"), Var("y"), Index("d", 10)
>>> digit, same = Predicate("digit", 1, columns=tuple("0123456789")), Predicate("same", 2)
>>> family = Family("same/1", Forall((x, y), (digit[d](x) & digit[d](y)) >> same(x, y)), each=d)
>>> family.size, family.groundings(64), sorted(reads(family.formula))
(10, 4096, ['digit', 'same'])

(`>>` is the implication; Python binds it tighter than `&`, hence the parentheses).
An `Index` is a variable over the constants 0..size-1 (the columns of an indexed predicate such
as `digit`); a family `each` index gives one formula per constant (a leading dim of the result),
and `OrOver`/`AndOver` fold the t-conorm/t-norm over an index inside a formula.
"""

from __future__ import annotations

from dataclasses import dataclass


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
        return tuple(v for q in prefix(self.formula)[0] for v in q.vars)

    def groundings(self, b: int) -> int:
        """Instances of each formula of the family on a batch of b objects: b ** #variables."""
        return b ** len(self.quantified)


def prefix(formula: Formula) -> tuple[list[Quantifier], Formula]:
    """Split a prenex formula into its quantifier prefix (outermost first) and its matrix."""
    quantifiers: list[Quantifier] = []
    while isinstance(formula, Forall | Exists):
        quantifiers.append(formula)
        formula = formula.body
    return quantifiers, formula


def children(node: Formula) -> tuple[Formula, ...]:
    """The direct sub-formulas of a quantifier-free node (a quantifier inside raises)."""
    if isinstance(node, Not | OrOver | AndOver):
        return (node.body,)
    if isinstance(node, And | Or):
        return (node.left, node.right)
    if isinstance(node, Implies):
        return (node.antecedent, node.consequent)
    if isinstance(node, Forall | Exists):
        raise ValueError(f"formula is not prenex: a quantifier over {node.vars} sits inside")
    return ()


def reads(formula: Formula) -> set[str]:
    """The interpretation keys (predicates) a prenex formula reads."""
    matrix = prefix(formula)[1]
    if isinstance(matrix, Atom):
        return {matrix.predicate.key}
    return set().union(*(reads(child) for child in children(matrix)))


# The operator kind (kinds.KINDS) that evaluating each node calls (compiler._node, _fold and
# Compiled's aggregations); Not calls the fixed strong negation, Atom nothing.
CALLS: dict[type, str] = {
    And: "tnorm",
    AndOver: "tnorm",
    Or: "tconorm",
    OrOver: "tconorm",
    Implies: "implication",
    Forall: "forall",
    Exists: "exists",
}


def connectives(formula: Formula) -> frozenset[str]:
    """The operator kinds evaluating a prenex formula calls (CALLS), walked over its tree: a
    fold over an index of one constant calls none."""
    quantifiers, matrix = prefix(formula)
    kinds = {CALLS[type(q)] for q in quantifiers}
    nodes = [matrix]
    while nodes:
        node = nodes.pop()
        folds_one = isinstance(node, OrOver | AndOver) and node.index.size == 1
        if type(node) in CALLS and not folds_one:
            kinds.add(CALLS[type(node)])
        nodes.extend(children(node))
    return frozenset(kinds)
