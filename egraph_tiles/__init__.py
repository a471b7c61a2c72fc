"""egraph_tiles: equality-saturation optimizer for NPU tile programs."""

from .dsl import DslError, parse_program, print_program  # noqa: E402
from .ir.equality import assert_structural_equal, structural_equal  # noqa: E402
from .ir.verify import verify_program  # noqa: E402
from . import passes  # noqa: E402
from .passes.canonicalize import canonicalize_tile_slice  # noqa: E402


def optimize(program, **kwargs):  # noqa: ANN001, ANN201
    """All optimization passes (today: CanonicalizeTileSlice); returns a new Program."""
    return canonicalize_tile_slice(program, **kwargs)
