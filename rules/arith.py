"""Integer-expression arithmetic: a syntax sort, an affine normal form, and the rules between them.

Sorts
-----
``Num``   the Python face of ``Idx``, the one integer syntax sort of the project (``rules.sorts``):
          ``Num(3)`` is the tile pass's ``(Lit 3)`` and ``+ - *`` are its ``Add`` / ``Sub`` /
          ``Mul`` — the same constructors, with the same meaning, the tile pass and the
          Acc-window check fold with ``rules.offsets`` and ``rules.multiples``.  The NKI layer
          adds constructors of its own to the sort: ``Num.var("i", var_key("i"))`` (``Var``: a
          variable with its sort key; use the helper :func:`var`), unary ``-`` (``Neg``), ``//``
          and ``%`` (``FloorDiv`` / ``Mod``, floor semantics, like Python) and ``Num.of_lin``.
``Atom``  what a normal form is a linear combination *of*: a variable, or a quasi-affine
          ``Atom.floordiv(R, d)`` / ``Atom.mod(R, d)`` of a normal form ``R`` by a constant ``d > 0``.
``Lin``   the canonical affine normal form: a list of ``coef * atom`` terms sorted by an integer
          ``key`` (strictly increasing, no zero coefficient, one term per atom) ending in a
          constant: ``Lin.term(c, key, atom, rest)`` ... ``Lin(c)``.

The function ``norm(n: Num) -> Lin`` is defined by the rules of :data:`arith_rules`; after
saturation, ``norm(n)``'s e-class holds the canonical ``Lin`` term, which the default extractor
returns (helper functions are ``unextractable``; quasi-affine atoms cost more, so a form the
bounds rules of ``egraph_tiles.rules.affine`` simplified is preferred).  A product of two
non-constant expressions has no normal form (``norm`` stays empty): the layer is affine by design.

How to reuse
------------
Run :func:`arith_schedule` (and optionally ``arith_union_rules``) in your own e-graph::

    from egglog import EGraph, eq
    from egraph_tiles.rules.arith import Num, var, arith_schedule, arith_union_rules
    i = var("i")
    a = (i * 16 + 8) - 8                     # ints convert to Num
    eg = EGraph(); eg.register(a, i * 16)
    eg.run((arith_schedule() + arith_union_rules.saturate()).saturate())
    eg.check(eq(a).to(i * Num(16)))          # same normal form => same e-class

``arith_union_rules`` normalizes every ``Num`` term (one ``norm_every_*`` rule per constructor),
unions every two ``Num`` whose normal forms coincide (so ``(i*16+8)-8`` and ``i*16`` become one
e-class) and joins a constant expression with its literal ``Num(c)`` (constant folding).
``Num.of_lin(P)`` embeds a normal form back into syntax.  To only *read* normal forms, register
``norm(n)`` and extract it after ``arith_schedule()``.  ``egraph_tiles.rules.affine`` adds
substitution and interval bounds on top (``affine_schedule()`` includes everything here).

Variable order is by ``key``; :func:`var` derives the key from the name with a stable hash, so
normal forms agree across e-graphs.  Keys of quasi-affine atoms are a structural hash of their
operand's normal form (collision probability ~2**-40 per pair; a collision would leave a sum
un-normalized, never produce a wrong one, because equal keys are only combined for the same atom).
"""

from __future__ import annotations

import hashlib

from egglog import (
    converter,
    Schedule,
    subsume,
    eq,
    Expr,
    String,
    StringLike,
    function,
    i64,
    i64Like,
    method,
    rule,
    ruleset,
    set_,
    union,
    vars_,
)

__all__ = [
    "ATOM_KEY_BASE",
    "HASH_MODULUS",
    "Atom",
    "Lin",
    "Num",
    "arith_analysis",
    "arith_rules",
    "arith_schedule",
    "arith_union_rules",
    "atom_key",
    "atom_lin",
    "floor_div",
    "lin_add",
    "lin_floordiv",
    "lin_key",
    "lin_mod",
    "lin_quot",
    "lin_rem",
    "lin_scale",
    "mk_term",
    "mod_pos",
    "norm",
    "var",
    "var_key",
]

#: Modulus of the structural hash used for quasi-affine atom keys (keeps i64 products in range).
HASH_MODULUS = 1_099_511_627_689
#: Keys of quasi-affine atoms start here, so they sort after every variable (keys < 2**40).
ATOM_KEY_BASE = 1 << 41
_HASH_MULT = 1_000_003


def var_key(name: str) -> int:
    """Stable sort key of a variable name (40-bit blake2b; identical in every e-graph)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=5).digest(), "big")


class Num(Expr, egg_sort="Idx"):
    """An integer expression of the shared ``Idx`` sort (``rules.sorts``): the tile pass's
    ``Lit`` / ``Add`` / ``Sub`` / ``Mul`` plus the NKI layer's own constructors."""

    # the constructors the tile pass declares too (rules.sorts.IDX_SCHEMA)
    @method(egg_fn="Lit")
    def __init__(self, value: i64Like) -> None: ...

    @method(egg_fn="Add")
    def __add__(self, other: Num) -> Num: ...

    @method(egg_fn="Sub")
    def __sub__(self, other: Num) -> Num: ...

    @method(egg_fn="Mul")
    def __mul__(self, other: Num) -> Num: ...

    # the NKI layer's own: a keyed variable, negation, quasi-affine division, an embedded form
    @method(egg_fn="Var")
    @classmethod
    def var(cls, name: StringLike, key: i64Like) -> Num: ...

    @method(egg_fn="OfLin")
    @classmethod
    def of_lin(cls, p: Lin) -> Num: ...

    @method(egg_fn="Neg")
    def __neg__(self) -> Num: ...

    @method(egg_fn="FloorDiv")
    def __floordiv__(self, other: Num) -> Num: ...

    @method(egg_fn="Mod")
    def __mod__(self, other: Num) -> Num: ...


class Atom(Expr, egg_sort="Atom"):
    """A variable or a quasi-affine floor-division / modulo of a normal form by a constant."""

    @method(egg_fn="AVar")
    @classmethod
    def var(cls, name: StringLike, key: i64Like) -> Atom: ...

    @method(egg_fn="AFloorDiv", cost=20)
    @classmethod
    def floordiv(cls, p: Lin, d: i64Like) -> Atom: ...

    @method(egg_fn="AMod", cost=20)
    @classmethod
    def mod(cls, p: Lin, d: i64Like) -> Atom: ...


class Lin(Expr, egg_sort="Lin"):
    """Canonical affine normal form: sorted ``coef * atom`` terms ending in a constant."""

    @method(egg_fn="LinConst")
    def __init__(self, c: i64Like) -> None: ...

    @method(egg_fn="LinTerm")
    @classmethod
    def term(cls, coef: i64Like, key: i64Like, atom: Atom, rest: Lin) -> Lin: ...


converter(int, Num, lambda v: Num(v))


def var(name: str) -> Num:
    """The ``Num`` of variable ``name`` with its stable key."""
    return Num.var(name, var_key(name))


@function(egg_fn="norm", unextractable=True)
def norm(n: Num) -> Lin:
    """Normal form of a syntax term (filled in by :data:`arith_rules`)."""


@function(egg_fn="lin_add", unextractable=True)
def lin_add(a: Lin, b: Lin) -> Lin: ...


@function(egg_fn="lin_scale", unextractable=True)
def lin_scale(a: Lin, k: i64Like) -> Lin: ...


@function(egg_fn="mk_term", unextractable=True)
def mk_term(coef: i64Like, key: i64Like, atom: Atom, rest: Lin) -> Lin:
    """Smart constructor: ``Lin.term`` unless ``coef == 0``, then just ``rest``."""


@function(egg_fn="atom_lin", unextractable=True)
def atom_lin(a: Atom) -> Lin:
    """The normal form ``1 * a + 0`` of a single atom (needs the atom's key)."""


@function(egg_fn="lin_quot", unextractable=True)
def lin_quot(a: Lin, d: i64Like) -> Lin:
    """Coefficient-wise floor quotient: ``P = d * lin_quot(P, d) + lin_rem(P, d)``."""


@function(egg_fn="lin_rem", unextractable=True)
def lin_rem(a: Lin, d: i64Like) -> Lin:
    """Coefficient-wise non-negative remainder (every coefficient and constant in ``[0, d)``)."""


@function(egg_fn="lin_floordiv", unextractable=True)
def lin_floordiv(a: Lin, d: i64Like) -> Lin:
    """``floor(P / d)`` for ``d > 0``."""


@function(egg_fn="lin_mod", unextractable=True)
def lin_mod(a: Lin, d: i64Like) -> Lin:
    """``P mod d`` (non-negative) for ``d > 0``."""


@function(egg_fn="rem_floordiv", unextractable=True)
def rem_floordiv(r: Lin, d: i64Like) -> Lin:
    """``floor(R / d)`` where ``R = lin_rem(P, d)`` (so ``R``'s constant is in ``[0, d)``)."""


@function(egg_fn="rem_mod", unextractable=True)
def rem_mod(r: Lin, d: i64Like) -> Lin:
    """``R mod d`` where ``R = lin_rem(P, d)``."""


@function(egg_fn="lin_key", merge=lambda old, new: old.min(new))
def lin_key(p: Lin) -> i64:
    """Structural hash of a canonical normal form (min over the canonical members of the class)."""


@function(egg_fn="atom_key", merge=lambda old, new: old.min(new))
def atom_key(a: Atom) -> i64:
    """Sort key of an atom: a variable's own key, or a structural hash for ``//`` / ``%`` atoms."""


def mod_pos(x: i64, m: i64Like) -> i64:
    """Non-negative remainder (egglog's ``%`` truncates toward zero)."""
    return ((x % m) + m) % m


def floor_div(x: i64, d: i64Like) -> i64:
    """Floor division expressed with truncating ``/`` (exact after removing the remainder)."""
    return (x - mod_pos(x, d)) / d


def _mix(a: i64, b: i64) -> i64:
    return (mod_pos(a, HASH_MODULUS) * _HASH_MULT + mod_pos(b, HASH_MODULUS)) % HASH_MODULUS


a, b = vars_("a b", Num)
p, q, r, r1, r2, out = vars_("p q r r1 r2 out", Lin)
x, x1, x2 = vars_("x x1 x2", Atom)
c, c1, c2, k, k1, k2, d, d2, h = vars_("c c1 c2 k k1 k2 d d2 h", i64)
name = vars_("name", String).__next__()


arith_rules = ruleset(
    # --- syntax -> normal form -------------------------------------------------------------
    # A literal is the constant normal form.
    rule(eq_n := norm(Num(c)), name="norm_const").then(union(eq_n).with_(Lin(c))),
    # A variable is `1 * var + 0`; its atom's key is the variable's key.
    rule(norm(Num.var(name, k)), name="norm_var").then(
        union(norm(Num.var(name, k))).with_(Lin.term(1, k, Atom.var(name, k), Lin(0))),
        set_(atom_key(Atom.var(name, k))).to(k),
    ),
    # The embedding of a normal form normalizes to itself.
    rule(norm(Num.of_lin(p)), name="norm_of_lin").then(union(norm(Num.of_lin(p))).with_(p)),
    # Sums, differences and negation are merges / scalings of the operands' normal forms.
    rule(norm(a + b), name="norm_add").then(union(norm(a + b)).with_(lin_add(norm(a), norm(b)))),
    rule(norm(a - b), name="norm_sub").then(
        union(norm(a - b)).with_(lin_add(norm(a), lin_scale(norm(b), -1)))
    ),
    rule(norm(-a), name="norm_neg").then(union(norm(-a)).with_(lin_scale(norm(a), -1))),
    # Products and quotients first normalize their operands (the guards below read them).
    rule(norm(a * b), name="norm_mul_operands").then(norm(a), norm(b)),
    rule(norm(a // b), name="norm_floordiv_operands").then(norm(a), norm(b)),
    rule(norm(a % b), name="norm_mod_operands").then(norm(a), norm(b)),
    # A product is affine only when one side normalizes to a constant.
    rule(norm(a * b), eq(norm(b)).to(Lin(c)), name="norm_mul_const_right").then(
        union(norm(a * b)).with_(lin_scale(norm(a), c))
    ),
    rule(norm(a * b), eq(norm(a)).to(Lin(c)), name="norm_mul_const_left").then(
        union(norm(a * b)).with_(lin_scale(norm(b), c))
    ),
    # Quasi-affine: `//` and `%` by a positive constant.
    rule(norm(a // b), eq(norm(b)).to(Lin(d)), d > 0, name="norm_floordiv_const").then(
        union(norm(a // b)).with_(lin_floordiv(norm(a), d))
    ),
    rule(norm(a % b), eq(norm(b)).to(Lin(d)), d > 0, name="norm_mod_const").then(
        union(norm(a % b)).with_(lin_mod(norm(a), d))
    ),
    # --- merging two sorted term lists (like terms combined, `+0` dropped) -----------------
    rule(lin_add(Lin(c1), Lin(c2)), name="add_const_const").then(
        union(lin_add(Lin(c1), Lin(c2))).with_(Lin(c1 + c2))
    ),
    rule(lin_add(Lin.term(c1, k1, x1, r1), Lin(c2)), name="add_term_const").then(
        union(lin_add(Lin.term(c1, k1, x1, r1), Lin(c2))).with_(
            Lin.term(c1, k1, x1, lin_add(r1, Lin(c2)))
        )
    ),
    rule(lin_add(Lin(c1), Lin.term(c2, k2, x2, r2)), name="add_const_term").then(
        union(lin_add(Lin(c1), Lin.term(c2, k2, x2, r2))).with_(
            Lin.term(c2, k2, x2, lin_add(Lin(c1), r2))
        )
    ),
    rule(
        lin_add(Lin.term(c1, k1, x1, r1), Lin.term(c2, k2, x2, r2)), k1 < k2, name="add_term_lt"
    ).then(
        union(lin_add(Lin.term(c1, k1, x1, r1), Lin.term(c2, k2, x2, r2))).with_(
            Lin.term(c1, k1, x1, lin_add(r1, Lin.term(c2, k2, x2, r2)))
        )
    ),
    rule(
        lin_add(Lin.term(c1, k1, x1, r1), Lin.term(c2, k2, x2, r2)), k1 > k2, name="add_term_gt"
    ).then(
        union(lin_add(Lin.term(c1, k1, x1, r1), Lin.term(c2, k2, x2, r2))).with_(
            Lin.term(c2, k2, x2, lin_add(Lin.term(c1, k1, x1, r1), r2))
        )
    ),
    # Like terms (same key AND same atom) combine; a zero coefficient vanishes via mk_term.
    rule(lin_add(Lin.term(c1, k, x, r1), Lin.term(c2, k, x, r2)), name="add_like_terms").then(
        union(lin_add(Lin.term(c1, k, x, r1), Lin.term(c2, k, x, r2))).with_(
            mk_term(c1 + c2, k, x, lin_add(r1, r2))
        )
    ),
    rule(mk_term(c, k, x, r), c != 0, name="mk_term_nonzero").then(
        union(mk_term(c, k, x, r)).with_(Lin.term(c, k, x, r))
    ),
    rule(mk_term(i64(0), k, x, r), name="mk_term_zero").then(union(mk_term(i64(0), k, x, r)).with_(r)),
    # --- scaling by a constant ----------------------------------------------------------------
    rule(lin_scale(Lin(c1), k), name="scale_const").then(union(lin_scale(Lin(c1), k)).with_(Lin(c1 * k))),
    rule(lin_scale(Lin.term(c1, k1, x, r), k), name="scale_term").then(
        union(lin_scale(Lin.term(c1, k1, x, r), k)).with_(mk_term(c1 * k, k1, x, lin_scale(r, k)))
    ),
    # --- quasi-affine: split P = d*Q + R coefficient-wise, R's coefficients in [0, d) ---------
    rule(lin_quot(Lin(c), d), name="quot_const").then(
        union(lin_quot(Lin(c), d)).with_(Lin(floor_div(c, d)))
    ),
    rule(lin_rem(Lin(c), d), name="rem_const").then(union(lin_rem(Lin(c), d)).with_(Lin(mod_pos(c, d)))),
    rule(lin_quot(Lin.term(c, k, x, r), d), name="quot_term").then(
        union(lin_quot(Lin.term(c, k, x, r), d)).with_(mk_term(floor_div(c, d), k, x, lin_quot(r, d)))
    ),
    rule(lin_rem(Lin.term(c, k, x, r), d), name="rem_term").then(
        union(lin_rem(Lin.term(c, k, x, r), d)).with_(mk_term(mod_pos(c, d), k, x, lin_rem(r, d)))
    ),
    # floor((d*Q + R) / d) = Q + floor(R / d)  and  (d*Q + R) mod d = R mod d   (Q integral).
    rule(lin_floordiv(p, d), name="floordiv_split").then(
        union(lin_floordiv(p, d)).with_(lin_add(lin_quot(p, d), rem_floordiv(lin_rem(p, d), d)))
    ),
    rule(lin_mod(p, d), name="mod_split").then(union(lin_mod(p, d)).with_(rem_mod(lin_rem(p, d), d))),
    # A constant remainder c in [0, d): floor(c/d) = 0 and c mod d = c.
    rule(rem_floordiv(Lin(c), d), name="rem_floordiv_const").then(
        union(rem_floordiv(Lin(c), d)).with_(Lin(0))
    ),
    rule(rem_mod(Lin(c), d), name="rem_mod_const").then(union(rem_mod(Lin(c), d)).with_(Lin(c))),
    # Otherwise the remainder becomes an opaque quasi-affine atom -- only once the remainder is
    # completely canonical (its key is known), so the analyses (bounds in `affine`) run first.
    rule(rem_floordiv(r, d), eq(r).to(Lin.term(c, k, x, r1)), lin_key(r) == h,
         name="rem_floordiv_atom").then(union(rem_floordiv(r, d)).with_(atom_lin(Atom.floordiv(r, d)))),
    rule(rem_mod(r, d), eq(r).to(Lin.term(c, k, x, r1)), lin_key(r) == h,
         name="rem_mod_atom").then(union(rem_mod(r, d)).with_(atom_lin(Atom.mod(r, d)))),
    # The normal form of a single atom, once its key is known.
    rule(atom_lin(x), atom_key(x) == k, name="atom_lin_term").then(
        union(atom_lin(x)).with_(Lin.term(1, k, x, Lin(0)))
    ),
    name="arith_rules",
)

arith_analysis = ruleset(
    # --- keys: variables carry theirs; `//` and `%` atoms hash their operand ----------------
    # (a list has a key only once it is completely canonical: keys are computed from the tail up)
    rule(Lin(c), name="key_const").then(set_(lin_key(Lin(c))).to(_mix(c, i64(7)))),
    rule(Lin.term(c, k, x, r), lin_key(r) == h, name="key_term").then(
        set_(lin_key(Lin.term(c, k, x, r))).to(_mix(_mix(c, k), h))
    ),
    rule(Atom.floordiv(p, d), lin_key(p) == h, name="key_floordiv_atom").then(
        set_(atom_key(Atom.floordiv(p, d))).to(ATOM_KEY_BASE + _mix(_mix(h, d), i64(1)))
    ),
    rule(Atom.mod(p, d), lin_key(p) == h, name="key_mod_atom").then(
        set_(atom_key(Atom.mod(p, d))).to(ATOM_KEY_BASE + _mix(_mix(h, d), i64(2)))
    ),
    # Nested floor division: floor(floor(Q/d1)/d2) = floor(Q/(d1*d2)) for positive d1, d2.
    # The outer division is subsumed, so the two-level atom is never built.
    rule(rem_floordiv(r, d), eq(r).to(Lin.term(i64(1), k, Atom.floordiv(q, d2), Lin(0))),
         name="floordiv_nested").then(
        union(rem_floordiv(r, d)).with_(lin_floordiv(q, d * d2)), subsume(rem_floordiv(r, d))
    ),
    name="arith_analysis",
)


def arith_schedule() -> Schedule:
    """Saturate: the analyses to a fixpoint, then one structural step, repeated.

    The stratification matters: a remainder becomes a ``//`` / ``%`` atom only after every
    analysis had its chance to simplify (and subsume) it, so the e-graph never holds a
    canonical term equal to its own tail (which would unfold forever).
    """
    return (arith_analysis.saturate() + arith_rules).saturate()


arith_union_rules = ruleset(
    # Every syntax term is normalized (one rule per constructor: a bare variable cannot be a query).
    rule(a + b, name="norm_every_add").then(norm(a + b)),
    rule(a - b, name="norm_every_sub").then(norm(a - b)),
    rule(a * b, name="norm_every_mul").then(norm(a * b)),
    rule(-a, name="norm_every_neg").then(norm(-a)),
    rule(a // b, name="norm_every_floordiv").then(norm(a // b)),
    rule(a % b, name="norm_every_mod").then(norm(a % b)),
    rule(Num.var(name, k), name="norm_every_var").then(norm(Num.var(name, k))),
    rule(Num(c), name="norm_every_const").then(norm(Num(c))),
    # Two terms with one normal form are equal (so `(i*16+8)-8` joins `i*16`).
    rule(eq(norm(a)).to(norm(b)), name="union_equal_normal_forms").then(union(a).with_(b)),
    # A constant normal form joins its literal (constant folding).
    rule(eq(norm(a)).to(Lin(c)), name="fold_constant").then(union(a).with_(Num(c))),
    name="arith_union_rules",
)
