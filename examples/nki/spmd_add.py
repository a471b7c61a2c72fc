"""SPMD elementwise add, written for NKI 0.1 (legacy indexing).

Each program of a 2-D launch grid adds one 128 x 512 tile: program (r, c) owns rows
r*128 .. r*128 + 127 and columns c*512 .. c*512 + 511.

    egraph-tiles nki examples/nki/spmd_add.py --shape a=512x1024 b=512x1024 out=512x1024 \\
        --grid 4x2 --verify --migrate
"""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def spmd_add(a, b, out):
    row = nl.program_id(0)
    col = nl.program_id(1)
    i_p = row * 128 + nl.arange(128)[:, None]
    i_f = col * 512 + nl.arange(512)[None, :]
    x = nl.load(a[i_p, i_f])
    y = nl.load(b[i_p, i_f])
    nl.store(out[i_p, i_f], value=nl.add(x, y))
