"""``egraph_tiles.language``: the ``pl`` namespace for decorated classes
(see :mod:`egraph_tiles.dsl.language`)."""

import sys

from .dsl import language as _language

sys.modules[__name__] = _language
