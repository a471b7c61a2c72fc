"""Reorder inside each row, written for NKI 0.1 (legacy indexing).

Every row of ``x`` holds an 8 x 16 block stored row-major; ``out`` gets the same block stored
column-major: out[r, j*8 + i] = x[r, i*16 + j].  Two aranges summed into one dimension give the
tile two free axes; the store walks them in the other order.

    egraph-tiles nki examples/nki/block_transpose.py --shape x=256x128 out=256x128 --verify --migrate
"""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def block_transpose(x, out):
    n_i, n_j = 8, 16
    i_p = nl.arange(128)[:, None, None]
    i_i = nl.arange(n_i)[None, :, None]
    i_j = nl.arange(n_j)[None, None, :]
    for t in nl.affine_range(x.shape[0] // 128):
        block = nl.load(x[t * 128 + i_p, i_i * n_j + i_j])
        nl.store(out[t * 128 + i_p, i_j * n_i + i_i], value=block)
