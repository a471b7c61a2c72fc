"""The rule checker, step 2: what each constructor denotes and what each fact claims, as z3 terms
(the tile pass's windows and offsets, the Acc-window check's NZ layout, the hardware's legality)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import z3

from ..egraph.sexp import Sexp
from ..ir.ops import TRANSFERS, Role
from ..ir.target import ALIGN_BITS, CAP


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
                                      a[0] == z3.StringVal(Role.DENSE),
                                      a[0] == z3.StringVal(Role.HAND_BACK)),
    # rules/checks.py: a written window proven a legal view (1: not Vec, or at an aligned
    # address; 0 claims nothing), and a write through an operand never rewritten (no claim:
    # where the write lands is the encoder's statement)
    "ViewProven": lambda k, a, v: z3.Or(v == 0, _root_mem(a[0].root) != z3.StringVal("Vec"),
                                        divides(NUM.val(ALIGN_BITS), addr(a[0]))),
    "WrittenAsIs": lambda k, a, v: z3.BoolVal(True),
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
                        # (or one that only hands a window of it back: ``rules.calls``'s view of
                        # that window, at its real address, reads a fact not modelled here)
                        z3.If(z3.Or(ctx == z3.StringVal(Role.CALL),
                                    ctx == z3.StringVal(Role.HAND_BACK)), z3.Or(
                            mem != z3.StringVal("Vec"),
                            z3.And(colx_ok, divides(NUM.val(ALIGN_BITS), addr(t)))),
                        # the operand of a reshape / reinterpret_view: dense and aligned
                        z3.If(ctx == z3.StringVal(Role.DENSE), z3.Or(
                            mem != z3.StringVal("Vec"),
                            z3.And(contiguous, divides(NUM.val(ALIGN_BITS), addr(t)))),
                            # ... that the callee uses as a matmul operand: never a Mat window
                            z3.If(ctx == z3.StringVal(Role.CUBE_CALL), mem != z3.StringVal("Mat"),
                                  # handed on to a value only windows are taken of: no access
                                  z3.Or(ctx == z3.StringVal(Role.PASS), z3.And(
                                      # ... through a reshape: dense, at any address
                                      ctx == z3.StringVal(Role.DENSE_PASS),
                                      z3.Or(mem != z3.StringVal("Vec"), contiguous))))))))))
    if real.kind == "copy":
        target = real.extra[0]
        paths = z3.Or(*(z3.And(mem == z3.StringVal(src.value), target == z3.StringVal(dst.value))
                        for src, dsts in TRANSFERS.items() for dst in dsts))
        wanted = z3.If(ctx == z3.StringVal(Role.LEFT), target == z3.StringVal("Left"),
                       z3.If(ctx == z3.StringVal(Role.RIGHT), target == z3.StringVal("Right"),
                             target == z3.StringVal("Vec")))
        return z3.And(same, paths, wanted)
    return z3.BoolVal(False)
