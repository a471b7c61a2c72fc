"""egraph_tiles: equality-saturation optimizer for NPU tile programs."""

from .dsl import DslError, parse_program, print_program  # noqa: E402
