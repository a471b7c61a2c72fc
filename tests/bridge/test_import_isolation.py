"""The bridge to PyPTO is optional: importing egraph_tiles (its API, its command line) never
imports PyPTO nor the bridge."""

import subprocess
import sys


def test_importing_egraph_tiles_does_not_import_pypto():
    code = ("import sys, egraph_tiles, egraph_tiles.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pypto' "
            "or m == 'egraph_tiles.pypto'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
