"""What a realization costs: the dynamic (loop-aware) cost model and hoisting facts (``loops``),
the ILP extractor (``ilp``) and the bytes-copied metrics (``metrics``)."""
