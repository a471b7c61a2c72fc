"""egraph_tiles: equality-saturation optimizer for NPU tile programs."""

from .dsl import DslError, parse_program, print_program  # noqa: E402
from .ir.equality import assert_structural_equal, structural_equal  # noqa: E402
from .ir.verify import verify_program  # noqa: E402
