"""``python -m egraph_tiles``: the ``egraph-tiles`` command line."""

import sys

from .cli import main

sys.exit(main())
