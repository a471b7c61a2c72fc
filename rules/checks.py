"""Checks on slices the pass does not rewrite: a violation is a fact the driver turns into a
``ValueError`` naming the statement.

Seed / issue 4 item 7: a ``tile.slice`` with ``valid_shape`` / ``drop_dims`` is not a window the
pass canonicalizes, but its lazy materialization by a ``tile.col_expand_*`` consumer is the same
textract as for any slice: with a dynamic offset the address falls back to the source base
(#1640), and a non-contiguous window is densely repacked over its own source (#2010).  Either
would corrupt the source, so such a use is rejected rather than emitted.

The encoder states each such slice as a ``Win`` term (when its shape is two constant dims; any
other shape gets no term, so nothing can be proven about it) and each col_expand use of it as
``(RawColxUse n w)``.  Safety is a *positive* proof — ``IdentityCopy`` from ``rules.legality``, the
very notion that keeps a canonical col_expand operand zero-copy — recorded in the lattice
``ColxProven`` (0 at load, 1 once proven, merge = max).  The ``checks`` ruleset runs once, after
saturation (stratified): only then does ``ColxProven = 0`` mean "no proof exists", and a missing
proof is a violation (never a silent acceptance).
"""

RULES = """
(relation RawColxUse (i64 Tile))
(function ColxProven (Tile) i64 :merge (max old new))
(relation ColxViolation (i64))
; the identity-copy proof of a window (constant offset, contiguous) marks it safe to lower lazily
(rule ((IdentityCopy w)) ((set (ColxProven w) 1)) :ruleset legality :name "colx-identity-proven")
(ruleset checks)
; #1640 / #2010 for a valid_shape / drop_dims slice: a col_expand use with no identity-copy proof
; (dynamic offset, or a window that is neither a single row nor full width) is a violation
(rule ((RawColxUse n w) (= 0 (ColxProven w))) ((ColxViolation n))
      :ruleset checks :name "raw-slice-col-expand-violation")
"""

LOAD = """
(relation RawColxRow (i64 i64))
(rule ((RawColxRow n k)) ((RawColxUse n (NT k)) (set (ColxProven (NT k)) 0))
      :ruleset load :name "load-raw-col-expand-use")
"""
