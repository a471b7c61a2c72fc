"""egglog's low-level bindings (the Rust extension ``egglog.bindings``), loaded without egglog's
high-level package.

The pass drives egglog through its low-level bindings only.  ``from egglog import bindings`` first
runs the package's ``__init__``, which loads the high-level API and what it needs (a code
formatter, tracing, ...): ~20 MB of resident memory and ~0.3 s per process that the pass never
uses.  :data:`eb` is the extension module alone, registered under its own name, so a
later ``import egglog`` (the NKI solver, the rule checks) finds and reuses it: an extension
module is initialized once per process.  Modules of this package import it as
``from .bindings import eb``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType


def _load() -> ModuleType:
    mod = sys.modules.get("egglog.bindings")
    if mod is not None:  # already imported (egglog's package or an earlier load)
        return mod
    pkg = importlib.util.find_spec("egglog")  # finds the package without running it
    spec = (importlib.machinery.PathFinder.find_spec("egglog.bindings",
                                                      list(pkg.submodule_search_locations))
            if pkg is not None and pkg.submodule_search_locations else None)
    if spec is None or spec.loader is None:  # an unusual installation: the ordinary import
        from egglog import bindings

        return bindings
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


eb = _load()
