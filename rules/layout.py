"""Layout facts: memory space, storage bits, row pitch and the bit address of a window.

A window ``(Win b r c h w)`` starts at ``addr(b) + (r * pitch(b) + c) * storage_bits`` (seed: "base
+ (off_row * base_cols + off_col) * storage_bits"), where ``pitch`` is the base's column count —
a window's own rows keep its base's pitch.  ``(AddrMult t)`` is a power of two known to divide the
bit address of ``t`` (merge = max, capped at 2**30).  Roots: a tile with no memref or with the
allocation-planning sentinel (-1) is an aligned root (``FreshAlloc``); a memref byte offset ``e``
gives ``8 * Mult(e)``; anything else gives no fact, so nothing is proven about it.  A leaf that is
not a root of its own (a view, a loop carry, an ``if`` result, ...) states the pitch and buffer
start of its storage (``ir.storage``: the root's start plus the view's byte offset), or nothing.
"""

from ..ir.target import ALIGN_BITS, CAP

RULES = f"""
(relation MemOf (Tile String))
(function Bits (Tile) i64 :merge (max old new))
(function Pitch (Tile) i64 :merge (max old new))
(function PitchMult (Tile) i64 :merge (max old new))
(function AddrMult (Tile) i64 :merge (max old new))
(relation FreshAlloc (Tile))
(relation MemrefBytes (Tile Idx))
(relation PitchIdx (Tile Idx))
; a leaf whose columns are consecutive elements (row-major storage, ``ir.storage``): only then is
; one row, or a window as wide as the pitch, contiguous in memory; a view whose layout is unknown
; or transposed has no such fact
(relation UnitCols (Tile))
(ruleset layout)
; tile.slice inherits its source's memory (registry: inherits_input_memory), dtype and row pitch
(rule ((= w (Win b r c h wd)) (MemOf b m)) ((MemOf w m)) :ruleset layout :name "window-memory")
(rule ((= w (Win b r c h wd)) (= x (Bits b))) ((set (Bits w) x)) :ruleset layout :name "window-bits")
(rule ((= w (Win b r c h wd)) (= p (Pitch b))) ((set (Pitch w) p)) :ruleset layout :name "window-pitch")
(rule ((= w (Win b r c h wd)) (= p (PitchMult b))) ((set (PitchMult w) p))
      :ruleset layout :name "window-pitch-multiple")
; a symbolic column count is known through its own multiple
(rule ((PitchIdx t e) (= m (Mult e))) ((set (PitchMult t) m)) :ruleset layout :name "pitch-multiple")
; "the allocation-planning sentinel is treated as an aligned root" (and so is a tile with no memref)
(rule ((FreshAlloc t)) ((set (AddrMult t) {CAP})) :ruleset layout :name "fresh-allocation-aligned")
; "A known concrete MemRef byte offset is included before the modulo calculation"
(rule ((MemrefBytes t e) (= m (Mult e))) ((set (AddrMult t) (min (* m 8) {CAP})))
      :ruleset layout :name "memref-offset-multiple")
; window address = base + (r * pitch + c) * bits: gcd (min) of the three terms' multiples
(rule ((= w (Win b r c h wd)) (= mb (AddrMult b)) (= mr (Mult r)) (= mc (Mult c))
       (= pm (PitchMult b)) (= bits (Bits b)))
      ((set (AddrMult w) (min mb (min (* (min (* mr pm) {CAP}) bits) (* mc bits)))))
      :ruleset layout :name "window-address-multiple")
; a constant MemRef byte offset k and a constant column offset c are one constant part of the
; address, k * 8 + c * bits, judged whole with the exact modulo: aligned when the sum is, though
; neither part need be (16 B + 4 FP32 = 256 bits); the row part keeps its multiple
(rule ((= w (Win b r (Lit c) h wd)) (MemrefBytes b (Lit k)) (= mr (Mult r)) (= pm (PitchMult b))
       (= bits (Bits b)) (= 0 (% (+ (* k 8) (* c bits)) {ALIGN_BITS})))
      ((set (AddrMult w) (min {ALIGN_BITS} (* (min (* mr pm) {CAP}) bits))))
      :ruleset layout :name "window-address-exact-constant-part")
; a constant row and column offset over a constant pitch are one constant part of the address,
; (r * pitch + c) * bits, judged whole with the exact modulo: row 1, column 4 of a 12-wide FP32
; tile is 48 B + 16 B = 64 B in, aligned though neither part is
(rule ((= w (Win b (Lit r) (Lit c) h wd)) (= mb (AddrMult b)) (= p (Pitch b)) (= bits (Bits b))
       (= 0 (% (* (+ (* r p) c) bits) {ALIGN_BITS})))
      ((set (AddrMult w) (min mb {ALIGN_BITS})))
      :ruleset layout :name "window-address-exact-constant")
; a constant MemRef byte offset and a constant row and column offset over a constant pitch: the
; whole address k * 8 + (r * pitch + c) * bits is one constant, judged with the exact modulo —
; row 1 of a view 48 B into a 12-wide FP32 tile is 48 B + 48 B = 96 B in, aligned
(rule ((= w (Win b (Lit r) (Lit c) h wd)) (MemrefBytes b (Lit k)) (= p (Pitch b)) (= bits (Bits b))
       (= 0 (% (+ (* k 8) (* (+ (* r p) c) bits)) {ALIGN_BITS})))
      ((set (AddrMult w) {ALIGN_BITS}))
      :ruleset layout :name "window-address-exact-constant-start")

; A parameter its calls pass at different pitches or starts (``ir.frames``) is known in the
; leaf facts above only by what they share (a multiple of the row pitch, of the start), which
; may prove no window aligned that every call aligns.  Each call's own frame is stated too,
; ``(CallFrame t row-stride column-stride start)`` (bits), and carried down windows at constant
; offsets; a window aligned in every frame of its calls is aligned (``CallAligned``: 1 per frame
; aligned, 0 per frame not, merge = min).  ``frames`` is saturated before ``layout`` reads
; the minimum (every frame of a window is derived in one run from its base's: the minimum is final)
(relation CallFrame (Tile i64 i64 i64))
(function CallAligned (Tile) i64 :merge (min old new))
(ruleset frames)
(rule ((= w (Win b (Lit r) (Lit c) h wd)) (CallFrame b rs cs k))
      ((CallFrame w rs cs (+ k (+ (* r rs) (* c cs))))) :ruleset frames :name "window-call-frame")
(rule ((CallFrame t rs cs k) (= 0 (% k {ALIGN_BITS}))) ((set (CallAligned t) 1))
      :ruleset frames :name "aligned-in-a-call-frame")
(rule ((CallFrame t rs cs k) (!= 0 (% k {ALIGN_BITS}))) ((set (CallAligned t) 0))
      :ruleset frames :name "unaligned-in-a-call-frame")
; a window aligned where every call puts it
(rule ((= 1 (CallAligned t))) ((set (AddrMult t) {ALIGN_BITS}))
      :ruleset layout :name "aligned-in-every-call-frame")
"""

#: the rows of each call's frame (``egraph.encode``)
LOAD = """
(relation CallFrameRow (i64 i64 i64 i64))
(rule ((CallFrameRow k rs cs b)) ((CallFrame (NT k) rs cs (* b 8)))
      :ruleset load :name "load-call-frame")
"""
