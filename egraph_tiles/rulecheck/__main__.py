"""``python -m egraph_tiles.rulecheck`` [--table]: check every rule."""

from .check import main

raise SystemExit(main())
