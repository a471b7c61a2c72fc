"""egraph_tiles: equality-saturation optimizer for NPU tile programs."""
