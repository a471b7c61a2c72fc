"""Everything is in pyproject.toml; this file only says, before pip resolves a single
dependency, that the Python is too old (pip installing from a folder otherwise reports the
dependencies it cannot find for that Python, not the reason)."""

import sys

if sys.version_info < (3, 11):
    sys.exit(f"egraph-tiles needs Python 3.11 or newer (requires-python >= 3.11); this is "
             f"Python {sys.version.split()[0]}")

from setuptools import setup  # noqa: E402

setup()
