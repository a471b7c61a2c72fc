"""Sliding-window sum over a ragged row tiling, written for NKI 0.1 (legacy indexing).

out[r, c] = x[r, c] + x[r, c + 1] + x[r, c + 2] + x[r, c + 3] for the first ``n_rows`` rows.
Rows are tiled by 128; the last tile is partial, so every load and store is masked.  The windows
overlap: the load reads a (128, 61, 4) tile of a 64-column tensor.

    egraph-tiles nki examples/nki/window_sum.py --shape x=300x64 out=300x61 --verify --migrate
"""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def window_sum(x, out, n_rows=300):
    k = 4
    width = x.shape[1] - k + 1
    i_p = nl.arange(128)[:, None, None]
    i_w = nl.arange(width)[None, :, None]
    i_k = nl.arange(k)[None, None, :]
    o_p = nl.arange(128)[:, None]
    o_w = nl.arange(width)[None, :]
    for t in nl.affine_range((n_rows + 127) // 128):
        windows = nl.load(x[t * 128 + i_p, i_w + i_k], mask=(t * 128 + i_p < n_rows))
        sums = nl.sum(windows, axis=2)
        nl.store(out[t * 128 + o_p, o_w], value=sums, mask=(t * 128 + o_p < n_rows))
