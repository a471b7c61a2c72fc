"""Symbolic soundness checks of the rewrite rules in ``egraph_tiles.rules``.

Every rules module is read programmatically: egglog text (a module's ``RULES`` / ``SCHEMA`` / ``RELAYOUT``
strings) is parsed directly; Python ``egglog`` rulesets are rendered to egglog text through
``EGraph(save_egglog_string=True)``.  Each ``rule`` / ``rewrite`` then becomes a z3 claim

    query facts  ∧  domain axioms   ⟹   every action's meaning

under the interpretation in :data:`INTERP` (what each constructor *denotes*) and
:data:`FACTS` (what each lattice function / relation *claims*).  ``union a b`` claims equal
denotations (for a ``Use`` of a window: that the realization is legal on the hardware
model); ``set (F args) v`` claims ``F``'s fact.  A rule whose symbols have no
interpretation is reported ``uncovered`` — those are judged by the end-to-end property
``hardware(optimize(p)) == ideal(p)`` instead.  Integer arithmetic is mathematical (egglog
i64 overflow raises, it never wraps); ``/`` and ``%`` on i64 truncate like Rust.

Run ``python -m egraph_tiles.sim.rulecheck`` (``--table`` prints the markdown table).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import z3
from egglog import EGraph, Ruleset

from ..egraph.schedule import program_text
from ..egraph.sexp import Q, Sexp, parse_sexps, show
from ..ir.ops import TRANSFERS, Role
from ..ir.target import ALIGN_BITS, CAP
from ..nki.index.solver import _SCHEDULE
from ..rules.windows import PROGRAM

# ---------------------------------------------------------------- rule collection


@dataclass
class RuleSpec:
    module: str
    name: str
    query: list[Sexp]
    actions: list[Sexp]
    text: str


@dataclass
class Signatures:
    args: dict[str, list[str]] = field(default_factory=dict)
    out: dict[str, str] = field(default_factory=dict)

    def add_decls(self, forms: list[Sexp]) -> None:
        for f in forms:
            if not isinstance(f, list) or not f:
                continue
            head = f[0]
            if head == "datatype":
                sort = f[1]
                for ctor in f[2:]:
                    if isinstance(ctor, list):
                        self.args[ctor[0]] = [a for a in ctor[1:] if isinstance(a, str)
                                              and not a.startswith(":")]
                        self.out[ctor[0]] = sort
            elif head in ("constructor", "function"):
                self.args[f[1]] = list(f[2])
                self.out[f[1]] = f[3]
            elif head == "relation":
                self.args[f[1]] = list(f[2])
                self.out[f[1]] = "Unit"


def _kw(form: list, key: str) -> Any:
    for i, x in enumerate(form):
        if x == key and i + 1 < len(form):
            return form[i + 1]
    return None


def _rules_of(module: str, forms: list[Sexp]) -> list[RuleSpec]:
    out: list[RuleSpec] = []
    for f in forms:
        if not isinstance(f, list) or not f or f[0] not in ("rule", "rewrite", "birewrite"):
            continue
        name = _kw(f, ":name")
        name = name.s if isinstance(name, Q) else show(f)[:60]
        if f[0] == "rule":
            out.append(RuleSpec(module, name, list(f[1]), list(f[2]), show(f)))
        else:
            when = _kw(f, ":when") or []
            lhs, rhs = f[1], f[2]
            out.append(RuleSpec(module, name, [["=", "__lhs", lhs], *when],
                                [["union", "__lhs", rhs]], show(f)))
            if f[0] == "birewrite":
                out.append(RuleSpec(module, name + " (reverse)", [["=", "__lhs", rhs], *when],
                                    [["union", "__lhs", lhs]], show(f)))
    return out


def _egglog_text_of_ruleset(rs: Any) -> str:
    eg = EGraph(save_egglog_string=True)
    eg.run(rs)
    return eg.as_egglog_string


def _imported_names(mod: object) -> set[str]:
    """Names a module binds by ``import`` / ``from ... import`` (read from its source)."""
    tree = ast.parse(inspect.getsource(mod))  # type: ignore[arg-type]
    return {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}


def collect(package: str = "egraph_tiles.rules") -> tuple[list[RuleSpec], Signatures]:
    """Every rule of every module of ``package``, and the signatures declared there."""
    pkg = importlib.import_module(package)
    sigs = Signatures()
    rules: list[RuleSpec] = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{package}.{info.name}")
        texts = [v for k, v in vars(mod).items() if isinstance(v, str) and k.isupper()
                 and "(" in v and k in ("RULES", "SCHEMA", "RELAYOUT")]
        imported = _imported_names(mod)
        for name, v in vars(mod).items():
            # a ruleset is attributed to the module that defines it, not to its importers
            if isinstance(v, Ruleset) and not name.startswith("_") and name not in imported:
                texts.append(_egglog_text_of_ruleset(v))
        for t in texts:
            forms = parse_sexps(t)
            sigs.add_decls(forms)
            rules.extend(_rules_of(info.name, forms))
    seen: set[tuple[str, str]] = set()
    uniq = []
    for r in rules:
        if (r.module, r.name) not in seen:
            seen.add((r.module, r.name))
            uniq.append(r)
    return uniq, sigs


# ---------------------------------------------------------------- denotations


@dataclass(frozen=True)
class Tile:
    """A tile term: a window of ``rows x cols`` at ``(r, c)`` of the non-window ``root``."""

    root: z3.ExprRef  # String: the leaf's name
    r: z3.ArithRef
    c: z3.ArithRef
    rows: z3.ArithRef
    cols: z3.ArithRef
    window: bool | None  # None: unknown (a pattern variable)
    static: bool  # offsets are literals along the whole chain


@dataclass(frozen=True)
class Real:
    """A realization of one use: ("use", tile, ctx) / ("keep", tile) / ("copy", tile, mem) /
    ("ext", tile, i, j)."""

    kind: str
    tile: Tile
    extra: tuple = ()


S = z3.StringSort()


class _Num:
    """The integer domain of a check: mathematical integers, or (for the modular / alignment
    modules, where bit-blasting is fast and i64 wrap-around preserves divisibility by powers
    of two) 64-bit vectors with signed comparisons and truncating division."""

    bv = False

    def sort(self):
        return z3.BitVecSort(64) if self.bv else z3.IntSort()

    def val(self, n: int):
        return z3.BitVecVal(n, 64) if self.bv else z3.IntVal(n)

    def var(self, name: str):
        return z3.BitVec(name, 64) if self.bv else z3.Int(name)

    def fn(self, name: str, dom=None):
        return z3.Function(f"{name}.{'bv' if self.bv else 'int'}", dom or S, self.sort())


NUM = _Num()


def _root_addr(x): return NUM.fn("root_addr_bits")(x)
def _root_pitch(x): return NUM.fn("root_pitch")(x)
def _root_bits(x): return NUM.fn("root_bits")(x)
def _root_rows(x): return NUM.fn("root_rows")(x)
def _root_cols(x): return NUM.fn("root_cols")(x)
def _symval(x): return NUM.fn("sym_value")(x)


_root_mem = z3.Function("root_mem", S, S)



def addr(t: Tile) -> z3.ArithRef:
    """Bit address of a window: root + (r * pitch + c) * storage bits (row-major)."""
    return _root_addr(t.root) + (t.r * _root_pitch(t.root) + t.c) * _root_bits(t.root)


def _bv(x: z3.ArithRef) -> z3.BitVecRef:
    return z3.Int2BV(x, 64)


POW2 = [1 << i for i in range(37)]  # every power of two a fact can hold (≤ CAP * 64 bits)


def pow2(v: z3.ArithRef) -> z3.BoolRef:
    if NUM.bv:
        return z3.And(v > 0, v <= POW2[-1], (v & (v - 1)) == 0)
    return z3.Or(*(v == p for p in POW2))


def divides(m: z3.ArithRef, x: z3.ArithRef) -> z3.BoolRef:
    """m | x, for m a power of two (case split keeps it linear)."""
    if NUM.bv:
        return (x & (m - 1)) == 0
    if z3.is_int_value(m):
        return x % m == 0
    return z3.And(*(z3.Implies(m == p, x % p == 0) for p in POW2))


def lowbit(x: z3.ArithRef, fresh: z3.ArithRef) -> tuple[z3.ArithRef, z3.BoolRef]:
    """``x & -x`` (the largest power of two dividing x, x != 0) as ``fresh`` + its definition."""
    if NUM.bv:
        return x & -x, z3.BoolVal(True)
    return fresh, z3.Or(x == 0, z3.Or(*(z3.And(fresh == p, x % p == 0, x % (2 * p) != 0)
                                          for p in POW2[:-1])))


def tdiv(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    """Rust / egglog truncating division."""
    if NUM.bv:
        return a / b  # bvsdiv truncates
    q = z3.If(a >= 0, a / b, -((-a) / b))
    return z3.If(b >= 0, q, -z3.If(a >= 0, a / (-b), -((-a) / (-b))))


def floordiv(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    return z3.If(b > 0, a / b, (-a) / (-b))


def floormod(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    return a - b * floordiv(a, b)


def _min(a, b):
    return z3.If(a <= b, a, b)


def _max(a, b):
    return z3.If(a >= b, a, b)


PRIMS: dict[str, Callable[..., Any]] = {
    "+": lambda *xs: sum(xs[1:], xs[0]),
    "-": lambda a, b=None: -a if b is None else a - b,
    "*": lambda a, b: a * b,
    "/": tdiv,
    "%": lambda a, b: z3.SRem(a, b) if NUM.bv else a - b * tdiv(a, b),
    "min": _min, "max": _max,
    "&": lambda a, b: (a & b) if NUM.bv else z3.BV2Int(_bv(a) & _bv(b), is_signed=True),
    "|": lambda a, b: (a | b) if NUM.bv else z3.BV2Int(_bv(a) | _bv(b), is_signed=True),
    "<<": lambda a, b: (a << b) if NUM.bv else a * z3.BV2Int(z3.BitVecVal(1, 64) << _bv(b)),
    "abs": lambda a: z3.If(a >= 0, a, -a),
}
CMPS: dict[str, Callable[[Any, Any], z3.BoolRef]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "!=": lambda a, b: a != b,
}


def _leaf(s: z3.ExprRef) -> Tile:
    return Tile(s, NUM.val(0), NUM.val(0), _root_rows(s), _root_cols(s), False, True)


def _win(b: Tile, r, c, h, w, sexps: list[Sexp]) -> Tile:
    lit = all(isinstance(x, list) and x and x[0] == "Lit" for x in sexps[1:3])
    static = bool(b.static and lit and b.window is not None)
    return Tile(b.root, b.r + r, b.c + c, h, w, True, static)


#: what each constructor denotes: (checker, argument values, argument s-expressions) -> value
INTERP: dict[str, Callable[..., Any]] = {
    # rules/sorts.py: Idx, the one integer sort (the tile pass, the Acc windows and the NKI layer
    # share it: one meaning per constructor, whichever client's rule uses it), Tile, Real.  A
    # named variable — a tile-pass symbol, an NKI variable, an NKI variable atom — denotes the
    # value of that name (``sym_value``), one meaning for every client.
    "Lit": lambda k, a, s: a[0], "Sym": lambda k, a, s: _symval(a[0]),
    "Add": lambda k, a, s: a[0] + a[1], "Sub": lambda k, a, s: a[0] - a[1],
    "Mul": lambda k, a, s: a[0] * a[1],
    # ... its NKI-only constructors (rules/arith.py)
    "Var": lambda k, a, s: _symval(a[0]), "OfLin": lambda k, a, s: a[0],
    "Neg": lambda k, a, s: -a[0],
    "FloorDiv": lambda k, a, s: floordiv(a[0], a[1]),  # (d = 0 raises in Python)
    "Mod": lambda k, a, s: floormod(a[0], a[1]),
    "Leaf": lambda k, a, s: _leaf(a[0]),
    "Win": lambda k, a, s: _win(a[0], a[1], a[2], a[3], a[4], s),
    "Use": lambda k, a, s: Real("use", a[0], (a[1],)),
    "Keep": lambda k, a, s: Real("keep", a[0]),
    "Copy": lambda k, a, s: Real("copy", a[0], (a[1],)),
    "Ext": lambda k, a, s: Real("ext", a[0], (a[1], a[2])),
    # rules/arith.py: the affine normal form of an Idx term and its atoms denote integers
    "norm": lambda k, a, s: a[0], "LinConst": lambda k, a, s: a[0],
    "LinTerm": lambda k, a, s: a[0] * a[2] + a[3], "AVar": lambda k, a, s: _symval(a[0]),
    "AFloorDiv": lambda k, a, s: k.positive(a[1], floordiv(a[0], a[1])),
    "AMod": lambda k, a, s: k.positive(a[1], floormod(a[0], a[1])),
    "lin_add": lambda k, a, s: a[0] + a[1], "lin_scale": lambda k, a, s: a[0] * a[1],
    "mk_term": lambda k, a, s: a[0] * a[2] + a[3], "atom_lin": lambda k, a, s: a[0],
    "lin_floordiv": lambda k, a, s: k.positive(a[1], floordiv(a[0], a[1])),
    "lin_mod": lambda k, a, s: k.positive(a[1], floormod(a[0], a[1])),
    "rem_floordiv": lambda k, a, s: k.remainder(a, s, floordiv),
    "rem_mod": lambda k, a, s: k.remainder(a, s, floormod),
    "lin_quot": lambda k, a, s: k.quot_rem(a, s)[0],
    "lin_rem": lambda k, a, s: k.quot_rem(a, s)[1],
}


def _mult_fact(x: z3.ArithRef, v: z3.ArithRef) -> z3.BoolRef:
    return z3.And(pow2(v), v <= CAP, divides(v, x))


def _addr_fact(t: Tile, v: z3.ArithRef) -> z3.BoolRef:
    # an aligned root is aligned to everything the hardware asks (ALIGN_BITS); facts are
    # powers of two, and claim divisibility of the bit address up to that alignment
    return z3.And(pow2(v), v <= CAP, divides(_min(v, NUM.val(ALIGN_BITS)), addr(t)))


# ---------------------------------------------------------------- Acc windows (rules/windows.py)
#
# The contiguity rules are checked against the NZ address function of the hardware model
# (``sim/hardware.py``): element (i, j) of an [m, n] Acc tile sits at
# ((j/16)*(m/16) + i/16)*256 + (i%16)*16 + j%16, and the MAD writes an R x C window compactly
# from the window's first element, as an [R, C] NZ tile of its own.  A probed window (p, R, C, c)
# is a symbolic one in scope: parent m x n with m, n <= NZ_BOUND, whole 16-row fractals (R and
# the row offset r0 multiples of 16, as the MAD writes), in bounds.

NZ_BOUND = 2048  # parent rows / columns (L0C holds 32768 FP32 elements)


def _int_fn(name: str, arity: int) -> z3.FuncDeclRef:
    return z3.Function(f"{name}.{'bv' if NUM.bv else 'int'}", *[NUM.sort()] * (arity + 1))


def _acc_rows(p): return _int_fn("acc_rows", 1)(p)
def _acc_cols(p): return _int_fn("acc_cols", 1)(p)


def _probe_row(p, rows, cols, c):
    """The row offset of the probed window (any whole-fractal offset in bounds)."""
    return _int_fn("probe_row", 4)(p, rows, cols, c)


def nz_addr(m, i, j):
    """Element offset of (i, j) in an NZ tile of m rows (all values non-negative)."""
    return (tdiv(j, NUM.val(16)) * tdiv(m, NUM.val(16)) + tdiv(i, NUM.val(16))) * 256 \
        + PRIMS["%"](i, NUM.val(16)) * 16 + PRIMS["%"](j, NUM.val(16))


def nz_lands(p, rows, cols, c, i, j) -> z3.BoolRef:
    """The compact write of element (i, j) of the probed window lands on the parent's (i, j)."""
    m, r0 = _acc_rows(p), _probe_row(p, rows, cols, c)
    return nz_addr(m, r0 + i, c + j) - nz_addr(m, r0, c) == nz_addr(rows, i, j)


def _probe_fact(k, a, v) -> z3.BoolRef:
    p, rows, cols, c = a
    m, n, r0 = _acc_rows(p), _acc_cols(p), _probe_row(p, rows, cols, c)
    sixteen = NUM.val(16)
    return z3.And(m >= 16, m <= NZ_BOUND, PRIMS["%"](m, sixteen) == 0, n >= 1, n <= NZ_BOUND,
                  rows >= 16, rows <= m, PRIMS["%"](rows, sixteen) == 0, cols >= 1, cols <= n,
                  c >= 0, c <= n, c + cols <= n,
                  r0 >= 0, r0 <= m, PRIMS["%"](r0, sixteen) == 0, r0 + rows <= m)


def _noncontig_fact(k, a, v) -> z3.BoolRef:
    """Not contiguous, by a witness: the first column past the first 16-column block boundary
    the window crosses (row 0) does not land where the parent keeps it."""
    p, rows, cols, c = a
    j = NUM.val(16) - PRIMS["%"](c, NUM.val(16))
    return z3.And(j < cols, z3.Not(nz_lands(p, rows, cols, c, NUM.val(0), j)))


def _for_all(k, names: list[str], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
    """``∀ names: body``.  As a rule's claim (an action) the variables are left free — the claim
    is checked for validity, so they are universal, and the check stays quantifier-free."""
    xs = [NUM.var(f"{n}!{k.fresh_n if k is not None else 0}") for n in names]
    if k is not None:
        k.fresh_n += 1
    if k is not None and k.in_action:
        return body(*xs)
    return z3.ForAll(xs, body(*xs))


def _lands_everywhere(k, p, rows, cols, c) -> z3.BoolRef:
    """Every element of the probed window lands where the parent keeps it (contiguous)."""
    return _for_all(k, ["contig!i", "contig!j"], lambda i, j: z3.Implies(
        z3.And(i >= 0, i < rows, j >= 0, j < cols), nz_lands(p, rows, cols, c, i, j)))


def _dprobe_fact(k, a, v) -> z3.BoolRef:
    """A window of a dynamic column offset that is a multiple of m (a power of two), in scope."""
    p, rows, cols, m = a
    n, sixteen = _acc_cols(p), NUM.val(16)
    return z3.And(pow2(m), m <= CAP, _acc_rows(p) >= 16, _acc_rows(p) <= NZ_BOUND,
                  PRIMS["%"](_acc_rows(p), sixteen) == 0, n >= 1, n <= NZ_BOUND,
                  rows >= 16, rows <= _acc_rows(p), PRIMS["%"](rows, sixteen) == 0,
                  cols >= 1, cols <= n)


def _dyn_contig_fact(k, a, v) -> z3.BoolRef:
    """Every in-scope window at a column offset that is a multiple of m is contiguous."""
    p, rows, cols, m = a
    sixteen = NUM.val(16)

    def at(c, i, j):
        r0 = _probe_row(p, rows, cols, c)
        # (each bound on its own too: 64-bit sums must not wrap)
        in_scope = z3.And(c >= 0, c <= _acc_cols(p), c + cols <= _acc_cols(p), divides(m, c),
                          r0 >= 0, r0 <= _acc_rows(p), PRIMS["%"](r0, sixteen) == 0,
                          r0 + rows <= _acc_rows(p), i >= 0, i < rows, j >= 0, j < cols)
        return z3.Implies(in_scope, nz_lands(p, rows, cols, c, i, j))

    return _for_all(k, ["dyn!c", "dyn!i", "dyn!j"], at)


#: what each lattice function / relation claims: (checker, argument values, result) -> Bool
FACTS: dict[str, Callable[..., z3.BoolRef]] = {
    "Mult": lambda k, a, v: _mult_fact(a[0], v),
    "Bits": lambda k, a, v: _root_bits(a[0].root) == v,
    "Pitch": lambda k, a, v: _root_pitch(a[0].root) == v,
    "PitchMult": lambda k, a, v: _mult_fact(_root_pitch(a[0].root), v),
    "AddrMult": lambda k, a, v: _addr_fact(a[0], v),
    "MemOf": lambda k, a, v: _root_mem(a[0].root) == a[1],
    "FreshAlloc": lambda k, a, v: z3.And(a[0].r == 0, a[0].c == 0,
                                         divides(NUM.val(ALIGN_BITS), addr(a[0]))),
    "MemrefBytes": lambda k, a, v: z3.And(a[0].r == 0, a[0].c == 0, addr(a[0]) == 8 * a[1]),
    "PitchIdx": lambda k, a, v: _root_pitch(a[0].root) == a[1],
    "LoopVar": lambda k, a, v: k.loop_var(a),
    # rules/legality.py: the lazy col_expand materialization is an identity copy (the hardware
    # model's colx legality: a window at literal offsets, a single row or the full root width)
    "IdentityCopy": lambda k, a, v: z3.And(z3.BoolVal(bool(a[0].window) and a[0].static),
                                           z3.Or(a[0].rows == 1,
                                                 a[0].cols == _root_pitch(a[0].root))),
    # rules/checks.py: a dense window (any offset), and the contexts that read an operand as a
    # dense tile of its own (a program function's parameter, a reshape's operand)
    "Dense": lambda k, a, v: z3.And(z3.BoolVal(bool(a[0].window)),
                                    z3.Or(a[0].rows == 1, a[0].cols == _root_pitch(a[0].root))),
    "DenseUse": lambda k, a, v: z3.Or(a[0] == z3.StringVal(Role.CALL),
                                      a[0] == z3.StringVal(Role.DENSE)),
    "cost_table_Copy": lambda k, a, v: v == tdiv(a[0].rows * a[0].cols * _root_bits(a[0].root), 8),
    # rules/affine.py interval bounds
    "lin_lo": lambda k, a, v: v <= a[0], "lin_hi": lambda k, a, v: a[0] <= v,
    "atom_lo": lambda k, a, v: v <= a[0], "atom_hi": lambda k, a, v: a[0] <= v,
    # rules/windows.py: the Acc parent, the probed window, and the contiguity verdicts
    "w_acc_parent": lambda k, a, v: _acc_rows(a[0]) == a[1],
    "w_probe": _probe_fact,
    "w_noncontig": _noncontig_fact,
    "w_contig": lambda k, a, v: _lands_everywhere(k, *a),
    "w_dprobe": _dprobe_fact,
    "w_dyn_contig": _dyn_contig_fact,
    "w_acc_cols": lambda k, a, v: _acc_cols(a[0]) == a[1],
    "w_mid_block": lambda k, a, v: z3.And(a[1] == _acc_rows(a[0]),
                                          PRIMS["%"](a[3], NUM.val(16)) != 0),
}

#: key / hash bookkeeping: no semantic claim (only used to order terms)
BOOKKEEPING = {"lin_key", "atom_key"}

#: domain axioms on the uninterpreted layout functions (storage bits are powers of two ≤ 64,
#: pitches are positive, addresses non-negative)
def _domain(root: z3.ExprRef) -> list[z3.BoolRef]:
    b = _root_bits(root)
    bounded = [z3.And(v >= 0, v < (1 << 40)) for v in (_root_addr(root), _root_pitch(root))] \
        if NUM.bv else []
    return [z3.Or(*(b == x for x in (1, 2, 4, 8, 16, 32, 64))), _root_pitch(root) > 0,
            _root_addr(root) >= 0, *bounded]


def legal(ctx: z3.ExprRef, real: Real, use: Tile) -> z3.BoolRef:
    """The hardware model's legality of realizing a use of window ``use`` (see hardware.py)."""
    t = real.tile
    same = z3.And(t.root == use.root, t.r == use.r, t.c == use.c, t.rows == use.rows,
                  t.cols == use.cols)
    mem = _root_mem(t.root)
    if real.kind == "keep":
        if t.window is False:
            return same
        contiguous = z3.Or(t.rows == 1, t.cols == _root_pitch(t.root))
        colx_ok = z3.And(contiguous, z3.BoolVal(t.static)) if t.window else z3.BoolVal(False)
        return z3.And(same, z3.If(
            ctx == z3.StringVal(Role.ORD),
            z3.Or(mem != z3.StringVal("Vec"), divides(NUM.val(ALIGN_BITS), addr(t))),
            z3.If(ctx == z3.StringVal(Role.COLX), z3.Or(mem != z3.StringVal("Vec"), colx_ok),
                  z3.If(z3.Or(ctx == z3.StringVal(Role.LEFT), ctx == z3.StringVal(Role.RIGHT)),
                        mem != z3.StringVal("Mat"),
                        # a window passed to a program function: dense and aligned (egraph.calls)
                        z3.If(ctx == z3.StringVal(Role.CALL), z3.Or(
                            mem != z3.StringVal("Vec"),
                            z3.And(colx_ok, divides(NUM.val(ALIGN_BITS), addr(t)))),
                        # the operand of a reshape / reinterpret_view: dense and aligned
                        z3.If(ctx == z3.StringVal(Role.DENSE), z3.Or(
                            mem != z3.StringVal("Vec"),
                            z3.And(contiguous, divides(NUM.val(ALIGN_BITS), addr(t)))),
                            # ... that the callee uses as a matmul operand: never a Mat window
                            z3.If(ctx == z3.StringVal(Role.CUBE_CALL), mem != z3.StringVal("Mat"),
                                  z3.BoolVal(False))))))))
    if real.kind == "copy":
        target = real.extra[0]
        paths = z3.Or(*(z3.And(mem == z3.StringVal(src.value), target == z3.StringVal(dst.value))
                        for src, dsts in TRANSFERS.items() for dst in dsts))
        wanted = z3.If(ctx == z3.StringVal(Role.LEFT), target == z3.StringVal("Left"),
                       z3.If(ctx == z3.StringVal(Role.RIGHT), target == z3.StringVal("Right"),
                             target == z3.StringVal("Vec")))
        return z3.And(same, paths, wanted)
    return z3.BoolVal(False)


# ---------------------------------------------------------------- checking


#: functions defined by structural recursion on the normal form (not by its value): their
#: defining rules are not value identities; the rules *using* them are checked against the
#: specification P = d * lin_quot(P, d) + lin_rem(P, d)
DEFINITIONS = {"lin_quot", "lin_rem"}

#: modules whose claims are modular (alignment, known multiples): checked over 64-bit vectors
BITVECTOR_MODULES = {"multiples", "layout", "legality", "slices", "windows", "checks"}

#: z3's work budget per claim, in its deterministic resource units (``rlimit``), not seconds:
#: a verdict never depends on how loaded the machine is.  The hardest claim proved today (the
#: NZ contiguity of full-row windows) takes about 13 M; ``window-address-multiple`` needs about
#: 180 M and ``aligned-vec-view`` more than 300 M, so both stay "uncovered" and are judged by
#: the end-to-end property instead.
BUDGET = 40_000_000


def _unknown(s: z3.Solver) -> str:
    why = s.reason_unknown()
    return "z3: work budget exhausted" if why in ("canceled", "max. resource limit exceeded") \
        else f"z3: {why}"


class Uncovered(Exception):
    """A symbol without an interpretation."""


@dataclass
class Verdict:
    module: str
    rule: str
    status: str  # "proved" | "counterexample" | "uncovered"
    detail: str = ""


class Checker:
    def __init__(self, sigs: Signatures, interp: dict | None = None, facts: dict | None = None):
        self.sigs = sigs
        self.interp = INTERP if interp is None else interp
        self.facts = FACTS if facts is None else facts

    # -- per rule state
    def _reset(self) -> None:
        self.env: dict[str, Any] = {}
        self.sorts: dict[str, str] = {}
        self.axioms: list[z3.BoolRef] = []
        self.roots: list[z3.ExprRef] = []
        self.fresh_n = 0
        self.cache: dict[str, Any] = {}
        self.obligations: list[z3.BoolRef] = []
        self.in_action = False

    def _fresh(self, sort: str, hint: str) -> Any:
        self.fresh_n += 1
        n = f"{hint}!{self.fresh_n}"
        if sort == "String":
            return z3.String(n)
        if sort == "Tile":
            root = z3.String(n + ".root")
            self.roots.append(root)
            return Tile(root, NUM.var(n + ".r"), NUM.var(n + ".c"), NUM.var(n + ".rows"),
                        NUM.var(n + ".cols"), None, False)
        if sort in ("Real", "Roots", "Unit"):
            raise Uncovered(f"a free variable of sort {sort}")
        return NUM.var(n)

    # -- helpers used by INTERP / FACTS
    def positive(self, d: z3.ArithRef, value: z3.ArithRef) -> z3.ArithRef:
        """Quasi-affine terms are only ever built with a divisor d > 0: matched terms may
        assume it, and a rule that builds one must prove it."""
        (self.obligations if self.in_action else self.axioms).append(d > 0)
        return value

    def remainder(self, a: list, s: list[Sexp], fn: Callable) -> z3.ArithRef:
        self.positive(a[1], a[1])
        # rem_floordiv / rem_mod are only ever built on R = lin_rem(P, d): a constant R lies in
        # [0, d) (the remainder's invariant); a general R is taken as it is
        if isinstance(s[0], list) and s[0] and s[0][0] == "LinConst":
            self.axioms.append(z3.And(a[0] >= 0, a[0] < a[1]))
        return fn(a[0], a[1])

    def quot_rem(self, a: list, s: list[Sexp]) -> tuple[z3.ArithRef, z3.ArithRef]:
        key = show(s[0]) + "/" + show(s[1])
        if key not in self.cache:
            q, r = NUM.var(f"quot[{key}]"), NUM.var(f"rem[{key}]")
            self.axioms.extend([a[0] == a[1] * q + r, a[1] > 0])
            if isinstance(s[0], list) and s[0] and s[0][0] == "LinConst":
                self.axioms.append(z3.And(r >= 0, r < a[1]))
            self.cache[key] = (q, r)
        return self.cache[key]

    def loop_var(self, a: list) -> z3.BoolRef:
        k = NUM.var(f"trip!{self.fresh_n}")
        self.fresh_n += 1
        return z3.And(k >= 0, a[0] == a[1] + k * a[2])

    # -- sort inference of pattern variables
    def _infer(self, forms: list[Sexp]) -> None:
        changed = True

        def visit(x: Sexp, want: str | None) -> str | None:
            nonlocal changed
            if isinstance(x, str):
                if x in self.sorts:
                    return self.sorts[x]
                if want is not None and not x.startswith(":"):
                    self.sorts[x] = want
                    changed = True
                return want
            if isinstance(x, int):
                return "i64"
            if isinstance(x, Q):
                return "String"
            if not isinstance(x, list) or not x:
                return None
            head = x[0]
            if head in ("=", "!=", "union") and len(x) == 3:
                a = visit(x[1], None)
                b = visit(x[2], a)
                if a is None and b is not None:
                    visit(x[1], b)
                return None
            if head == "set" and len(x) == 3:
                visit(x[1], None)
                out = self.sigs.out.get(x[1][0]) if isinstance(x[1], list) else None
                visit(x[2], out)
                return None
            if head == "let":
                s = visit(x[2], None)
                visit(x[1], s)
                return s
            if head in self.sigs.args:
                for arg, srt in zip(x[1:], self.sigs.args[head]):
                    visit(arg, srt)
                return self.sigs.out.get(head)
            for arg in x[1:]:
                visit(arg, "i64")
            return "i64" if head in PRIMS else None

        while changed:
            changed = False
            for f in forms:
                visit(f, None)

    # -- translation
    def term(self, x: Sexp) -> Any:
        if isinstance(x, int):
            return NUM.val(x)
        if isinstance(x, Q):
            return z3.StringVal(x.s)
        if isinstance(x, str):
            if x not in self.env:
                self.env[x] = self._fresh(self.sorts.get(x, "i64"), x)
            return self.env[x]
        head, args = x[0], x[1:]
        if head == "&" and len(args) == 2 and args[1] == ["-", 0, args[0]]:
            v, definition = lowbit(self.term(args[0]), NUM.var(f"lowbit!{self.fresh_n}"))
            self.fresh_n += 1
            self.axioms.append(definition)
            return v
        if head in PRIMS:
            return PRIMS[head](*(self.term(a) for a in args))
        if head in self.interp:
            return self.interp[head](self, [self.term(a) for a in args], args)
        if head in self.facts or head in BOOKKEEPING:
            v = NUM.var(f"{head}!{self.fresh_n}")
            self.fresh_n += 1
            if head in self.facts:
                self.axioms.append(self.facts[head](self, [self.term(a) for a in args], v))
            return v
        raise Uncovered(f"no interpretation of {head!r}")

    def equal(self, a: Any, b: Any, ctx: list) -> z3.BoolRef:
        if isinstance(a, Tile) and isinstance(b, Tile):
            return z3.And(a.root == b.root, a.r == b.r, a.c == b.c, a.rows == b.rows,
                          a.cols == b.cols)
        if isinstance(a, Real) and isinstance(b, Real):
            if a.kind == "use" and b.kind == "use":
                return self.equal(a.tile, b.tile, ctx)
            if b.kind == "use":
                a, b = b, a
            if a.kind == "use":
                return legal(a.extra[0], b, a.tile)
            if a.kind == b.kind == "ext":
                return z3.And(a.tile.root == b.tile.root, a.tile.r + a.extra[0] == b.tile.r + b.extra[0],
                              a.tile.c + a.extra[1] == b.tile.c + b.extra[1])
            return self.equal(a.tile, b.tile, ctx) if a.kind == b.kind else z3.BoolVal(False)
        if isinstance(a, (Tile, Real)) or isinstance(b, (Tile, Real)):
            return z3.BoolVal(False)
        return a == b

    @staticmethod
    def _vars(x: Sexp) -> set[str]:
        if isinstance(x, str):
            return {x}
        if isinstance(x, list):
            return set().union(*(Checker._vars(y) for y in x[1:])) if len(x) > 1 else set()
        return set()

    def _order(self, query: list[Sexp]) -> list[Sexp]:
        """Definitions ``(= v (Ctor ...))`` before the atoms that use ``v``, so a variable
        is bound to its constructor term (and its syntactic facts) rather than a fresh value."""
        defs = {a[1]: a for a in query if isinstance(a, list) and len(a) == 3 and a[0] == "="
                and isinstance(a[1], str) and isinstance(a[2], list)}
        pending, out, bound = list(query), [], set()
        while pending:
            for a in pending:
                own = {a[1]} if any(a is d for d in defs.values()) else set()
                need = (self._vars(a) - own) & (set(defs) - bound)
                if not need:
                    break
            else:
                a = pending[0]
            pending.remove(a)
            out.append(a)
            if any(a is d for d in defs.values()):
                bound.add(a[1])
        return out

    def query(self, atom: Sexp) -> list[z3.BoolRef]:
        if isinstance(atom, list) and atom and atom[0] in ("=", "!=") and len(atom) == 3:
            lhs, rhs = atom[1], atom[2]
            if atom[0] == "=" and isinstance(lhs, str) and lhs not in self.env:
                self.env[lhs] = self.term(rhs)
                return []
            if atom[0] == "=" and isinstance(rhs, str) and rhs not in self.env:
                self.env[rhs] = self.term(lhs)
                return []
            eq = self.equal(self.term(lhs), self.term(rhs), [])
            return [eq if atom[0] == "=" else z3.Not(eq)]
        if isinstance(atom, list) and atom and atom[0] in CMPS:
            return [CMPS[atom[0]](self.term(atom[1]), self.term(atom[2]))]
        if isinstance(atom, list) and atom and atom[0] in self.facts and \
                self.sigs.out.get(atom[0]) == "Unit":
            return [self.facts[atom[0]](self, [self.term(a) for a in atom[1:]], None)]
        self.term(atom)  # a term that must exist: binds its variables
        return []

    def action(self, act: Sexp) -> list[z3.BoolRef]:
        head = act[0]
        if head == "union":
            return [self.equal(self.term(act[1]), self.term(act[2]), [])]
        if head == "set":
            f = act[1]
            if f[0] in BOOKKEEPING:
                return []
            if f[0] not in self.facts:
                raise Uncovered(f"no fact meaning for {f[0]!r}")
            return [self.facts[f[0]](self, [self.term(a) for a in f[1:]], self.term(act[2]))]
        if head == "let":
            self.env[act[1]] = self.term(act[2])
            return []
        if head in self.facts and self.sigs.out.get(head) == "Unit":
            return [self.facts[head](self, [self.term(a) for a in act[1:]], None)]
        if head == "subsume":  # hides a term from matching / extraction; claims nothing
            return []
        if head in ("delete", "panic", "extract"):
            raise Uncovered(f"action {head}")
        self.term(act)  # creating a term claims nothing
        return []

    def check(self, r: RuleSpec, rlimit: int = BUDGET) -> Verdict:
        NUM.bv = r.module in BITVECTOR_MODULES
        self._reset()
        heads = {a[1][0] if a[0] != "=" else None for a in r.actions
                 if isinstance(a, list) and a[0] == "union" and isinstance(a[1], list)}
        heads |= {q[0] for q in r.query[:1] if isinstance(q, list)}
        if heads & DEFINITIONS:
            return Verdict(r.module, r.name, "uncovered",
                           "structural definition of the coefficient-wise quotient/remainder")
        try:
            self._infer(r.query + r.actions)
            premises: list[z3.BoolRef] = []
            for atom in self._order(r.query):
                premises += self.query(atom)
            claims: list[z3.BoolRef] = []
            self.in_action = True
            for act in r.actions:
                claims += self.action(act)
            claims += self.obligations
        except Uncovered as e:
            return Verdict(r.module, r.name, "uncovered", str(e))
        if not claims:
            return Verdict(r.module, r.name, "proved", "no semantic claim (creates terms only)")
        s = z3.Solver()
        s.set("rlimit", rlimit)
        s.add(*premises, *self.axioms)
        for root in self.roots:
            s.add(*_domain(root))
        s.add(z3.Not(z3.And(*claims)))
        res = s.check()
        if res == z3.unsat:
            return Verdict(r.module, r.name, "proved")
        if res == z3.sat:
            m = s.model()
            shown = {k: m.eval(v.r if isinstance(v, Tile) else v, model_completion=True)
                     for k, v in self.env.items() if not isinstance(v, Real)}
            return Verdict(r.module, r.name, "counterexample",
                           ", ".join(f"{k}={v}" for k, v in shown.items() if k != "__lhs"))
        return Verdict(r.module, r.name, "uncovered", _unknown(s))


COMPLETENESS = "w_noncontig complete (a window no rule rejects is contiguous)"


def window_completeness(rules: list[RuleSpec], sigs: Signatures,
                        rlimit: int = BUDGET) -> Verdict:
    """The other half of "the rules say contiguous ⇔ the compact NZ write of the window lands on
    the window's own elements" (each rule deriving ``w_noncontig`` is checked on its own for ⇒):
    a probed window that *no* such rule rejects has every element land where the parent keeps
    it — the direction that matters for soundness (a missed rejection is a silent miscompute)."""
    NUM.bv = True
    deriving = [r for r in rules if r.module == "windows" and any(
        isinstance(a, list) and a and a[0] == "w_noncontig" for a in r.actions)]
    shared = [NUM.var(n) for n in ("p", "rows", "cols", "c")]
    s = z3.Solver()
    s.set("rlimit", rlimit)
    ck = Checker(sigs)
    try:
        for r in deriving:
            ck._reset()
            ck._infer(r.query + r.actions)
            probe = next(q for q in r.query if isinstance(q, list) and q and q[0] == "w_probe")
            ck.env.update(zip(probe[1:], shared))
            premises: list[z3.BoolRef] = []
            for atom in ck._order(r.query):
                premises += ck.query(atom)
            # the rule's own variables (e.g. the parent's row count) are existential in its query
            own = [v for name, v in ck.env.items() if name not in probe[1:] and z3.is_const(v)]
            fires = z3.And(*premises, *ck.axioms)
            s.add(z3.ForAll(own, z3.Not(fires)) if own else z3.Not(fires))
    except Uncovered as e:
        return Verdict("windows", COMPLETENESS, "uncovered", str(e))
    i, j = NUM.var("i"), NUM.var("j")
    s.add(_probe_fact(None, shared, None), i >= 0, i < shared[1], j >= 0, j < shared[2],
          z3.Not(nz_lands(*shared, i, j)))
    res = s.check()
    rules_text = ", ".join(r.name for r in deriving)
    if res == z3.unsat:
        return Verdict("windows", COMPLETENESS, "proved", f"NZ address function, z3 ({rules_text})")
    if res == z3.sat:
        m = s.model()
        p = shared[0]
        shown = {"parent rows": _acc_rows(p), "parent cols": _acc_cols(p), "rows": shared[1],
                 "cols": shared[2], "col": shared[3], "row": _probe_row(*shared)}
        return Verdict("windows", COMPLETENESS, "counterexample", ", ".join(
            f"{k}={m.eval(v, model_completion=True)}" for k, v in shown.items()))
    return Verdict("windows", COMPLETENESS, "uncovered", _unknown(s))


def check_all(package: str = "egraph_tiles.rules") -> list[Verdict]:
    rules, sigs = collect(package)
    ck = Checker(sigs)
    out = [ck.check(r) for r in rules]
    if any(r.module == "windows" for r in rules):
        out.append(window_completeness(rules, sigs))
    return out


#: what judges a rule that has no symbolic interpretation, by module: the NKI affine rules
#: never run inside `optimize`, so their judge is the sympy / numpy property tests of tests/nki
UNCOVERED_BY = {
    "arith": "property tests vs sympy / exhaustive numpy (`tests/nki/test_nki_rules_symbolic.py`)",
    "affine": "property tests vs sympy / exhaustive numpy (`tests/nki/test_nki_rules_symbolic.py`)",
    "": "end-to-end property `hardware(optimize(p)) == ideal(p)`",
}


def clients(package: str = "egraph_tiles.rules") -> dict[str, str]:
    """Which clients run each module's rules, read from the programs they compose (the tile
    pass's, the Acc-window check's, the NKI solver's schedule): a rule that serves several
    clients is still checked once, with the one meaning of its sorts."""
    texts = {"tile pass": program_text(), "Acc windows": PROGRAM}
    nki = str(_SCHEDULE)
    out: dict[str, str] = {}
    pkg = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{package}.{info.name}")
        rules = getattr(mod, "RULES", None)
        names = [c for c, t in texts.items() if isinstance(rules, str) and rules in t]
        if any(isinstance(v, Ruleset) and f"{k}" in nki for k, v in vars(mod).items()
               if k not in _imported_names(mod)):
            names.append("NKI layer")
        out[info.name] = ", ".join(names)
    return out


def table(verdicts: list[Verdict]) -> str:
    how = {"proved": "z3 proof (symbolic)", "counterexample": "**z3 counterexample**"}
    used = clients()
    lines = ["| module | rule | serves | verified by | note |", "|---|---|---|---|---|"]
    for v in verdicts:
        by = how.get(v.status) or UNCOVERED_BY.get(v.module, UNCOVERED_BY[""])
        lines.append(f"| {v.module} | {v.rule} | {used.get(v.module, '')} | {by} | {v.detail} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    vs = check_all()
    if "--table" in argv:
        print(table(vs))
    else:
        for v in vs:
            print(f"{v.status:15} {v.module}.{v.rule}  {v.detail}")
    counts = {s: sum(v.status == s for v in vs) for s in ("proved", "counterexample", "uncovered")}
    print(f"\n{len(vs)} rules: " + ", ".join(f"{n} {s}" for s, n in counts.items()), file=sys.stderr)
    return 1 if counts["counterexample"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
