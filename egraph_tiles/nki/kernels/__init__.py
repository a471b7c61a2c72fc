"""The NKI kernel front end: legacy kernel files read with ``ast`` (``reader`` with the table
of ``nl.*`` / ``nisa.*`` calls in ``calls``), every access inferred and checked (``analyze``),
rewritten in the NKI 0.2+ form (``migrate``) and the rewrite checked as a whole program
(``program``; ``mock`` executes kernels side by side in numpy).  Built on
``egraph_tiles.nki.index``; nothing there imports this package.
"""
