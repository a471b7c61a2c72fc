"""Declarative egglog rewrite rules, one module per concern (shipped as egraph_tiles.rules)."""
