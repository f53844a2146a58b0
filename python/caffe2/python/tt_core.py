"""Tensor-train (TT) helpers for fully connected layers, in numpy (upstream's ``tt_core``).

A TT-matrix of ``d`` cores stands for a weight matrix whose input dimension is
``prod(inp_sizes)`` and whose output dimension is ``prod(out_sizes)``. Core ``k`` has
``tt_ranks[k] * inp_sizes[k] * out_sizes[k] * tt_ranks[k + 1]`` entries; the first and the last
rank are 1 for a matrix. Every function returns all cores flattened into one 1-D float32 array.

Layouts, as upstream writes them:

- ``matrix_to_tt`` gives the cores in the order the upstream ``TT`` operator reads them: the
  last core first, core ``k`` laid out as ``[inp_sizes[k], tt_ranks[k + 1], tt_ranks[k],
  out_sizes[k]]``. With ``W`` an FC weight (``FC`` computes ``X * W^T``), entry ``W[o, i]`` is the
  sum over the ranks of the product of ``core_k[i_k, r_{k+1}, r_k, o_k]``, where ``(i_0, ...,
  i_{d-1})`` and ``(o_0, ..., o_{d-1})`` are the row-major digits of ``i`` and ``o``.
- ``init_tt_cores`` gives the first core first, core ``k`` laid out as ``[tt_ranks[k],
  inp_sizes[k], out_sizes[k], tt_ranks[k + 1]]``.
- ``tt_svd`` gives the first core first, core ``k`` laid out as ``[tt_ranks[k], sizes[k],
  tt_ranks[k + 1]]``.

This build registers no ``TT`` operator; these helpers only prepare the cores.
"""

import numpy as np


class TTSizeError(ValueError, AssertionError):
    """Inconsistent sizes or ranks. An AssertionError as well: upstream asserted these checks."""


def _check(condition, *message):
    if not condition:
        raise TTSizeError("".join(str(m) for m in message))


def _check_sizes(inp_sizes, out_sizes, tt_ranks):
    _check(
        len(inp_sizes) == len(out_sizes),
        "The number of input dimensions (",
        len(inp_sizes),
        ") must be equal to the number of output dimensions (",
        len(out_sizes),
        ").",
    )
    _check(
        len(tt_ranks) == len(inp_sizes) + 1,
        "The number of tt-ranks (",
        len(tt_ranks),
        ") must be one more than the number of input and output dims (",
        len(out_sizes),
        ").",
    )
    _check(len(inp_sizes) > 0, "A TT-matrix needs at least one core.")
    for name, values in (("input size", inp_sizes), ("output size", out_sizes), ("rank", tt_ranks)):
        for v in values:
            _check(int(v) == v and v >= 1, "Every ", name, " must be a positive integer, got ", v)


def init_tt_cores(inp_sizes, out_sizes, tt_ranks, seed=1234):
    """Random TT-cores for a TT-layer trained from scratch.

    Each core but the last is drawn from a standard normal distribution (after multiplying in the
    triangular factor of the previous core) and orthogonalized with a QR decomposition, so the
    product of the cores is the TT-contraction of i.i.d. standard normal cores. All cores are then
    scaled by ``0.1 / (prod(inp_sizes) * prod(tt_ranks)) ** (1 / d)``.

    Like upstream, this seeds numpy's global random generator with ``seed``.

    Args:
        inp_sizes: the input dimension of each core.
        out_sizes: the output dimension of each core.
        tt_ranks: the ranks, one more than the cores.
        seed: the seed of numpy's global random generator.

    Returns:
        The cores, first core first, each laid out as ``[rank_k, inp_k, out_k, rank_k+1]``,
        concatenated into one 1-D float32 array.
    """
    np.random.seed(seed)
    _check_sizes(inp_sizes, out_sizes, tt_ranks)
    inp_sizes = np.array(inp_sizes, dtype=np.int64)
    out_sizes = np.array(out_sizes, dtype=np.int64)
    tt_ranks = np.array(tt_ranks, dtype=np.int64)
    num_cores = inp_sizes.shape[0]
    for k in range(num_cores - 1):
        # A QR factor with fewer columns than the next rank would not fill its core.
        _check(
            tt_ranks[k + 1] <= tt_ranks[k] * inp_sizes[k] * out_sizes[k],
            "tt_ranks[",
            k + 1,
            "] (",
            tt_ranks[k + 1],
            ") must not exceed tt_ranks[",
            k,
            "] * inp_sizes[",
            k,
            "] * out_sizes[",
            k,
            "] (",
            tt_ranks[k] * inp_sizes[k] * out_sizes[k],
            ").",
        )

    pieces = []
    carry = 1.0
    for k in range(num_cores):
        left, right = int(tt_ranks[k]), int(tt_ranks[k + 1])
        middle = int(inp_sizes[k] * out_sizes[k])
        draw = np.random.normal(0, 1, size=(left, middle * right))
        core = np.dot(carry, draw).reshape(left * middle, right)
        if k < num_cores - 1:
            core, carry = np.linalg.qr(core)
        pieces.append(core.ravel())
    cores = np.concatenate(pieces)

    glorot_style = (np.prod(inp_sizes) * np.prod(tt_ranks)) ** (1.0 / num_cores)
    return (0.1 / glorot_style) * cores.astype(np.float32)


def matrix_to_tt(W, inp_sizes, out_sizes, tt_ranks):
    """Decompose a trained FC weight into TT-cores (TT-SVD).

    ``W`` is the weight of an ``FC`` layer, which computes ``X * W^T``: ``prod(out_sizes)`` rows
    and ``prod(inp_sizes)`` columns. (Upstream documents ``W.shape == (prod(inp_sizes),
    prod(out_sizes))`` and transposes ``W``; the two agree for the square weights it was used
    with, and only the FC reading gives a meaningful result otherwise.) With ranks as large as
    the SVDs allow, the cores reproduce ``W`` exactly; smaller ranks give the truncated
    TT-approximation.

    Args:
        W: 2-D weight matrix of the FC layer to convert.
        inp_sizes: the input dimension of each core.
        out_sizes: the output dimension of each core.
        tt_ranks: the ranks, one more than the cores; the first and the last must be 1.

    Returns:
        The cores in the layout the upstream ``TT`` operator reads (see the module docstring),
        concatenated into one 1-D float32 array.
    """
    _check_sizes(inp_sizes, out_sizes, tt_ranks)
    W = np.asarray(W)
    _check(W.ndim == 2, "The weight matrix must be 2-D, got shape ", W.shape, ".")
    _check(
        tt_ranks[0] == 1 and tt_ranks[-1] == 1,
        "The first and the last tt-rank of a matrix must be 1, got ",
        list(tt_ranks),
        ".",
    )
    num_inp, num_out = int(np.prod(inp_sizes)), int(np.prod(out_sizes))
    _check(
        W.shape == (num_out, num_inp),
        "The weight matrix must have prod(out_sizes) = ",
        num_out,
        " rows and prod(inp_sizes) = ",
        num_inp,
        " columns (an FC weight), got shape ",
        W.shape,
        ".",
    )
    inp_sizes = np.array(inp_sizes, dtype=np.int64)
    out_sizes = np.array(out_sizes, dtype=np.int64)
    tt_ranks = np.array(tt_ranks, dtype=np.int64)
    d = inp_sizes.shape[0]

    # Index the input-major matrix W^T by (i_0, ..., i_{d-1}, o_0, ..., o_{d-1}), then pair the
    # digits of each core: (i_0, o_0, i_1, o_1, ...), so that core k carries (i_k, o_k).
    tensor = W.T.reshape(np.concatenate((inp_sizes, out_sizes)))
    paired_axes = [axis for k in range(d) for axis in (k, d + k)]
    tensor = tensor.transpose(paired_axes).reshape(inp_sizes * out_sizes)

    chain = tt_svd(tensor, inp_sizes * out_sizes, tt_ranks)

    # Regroup each core as [inp, rank_k+1, rank_k, out] and store the last core first.
    result = np.zeros(chain.shape, dtype=np.float32)
    start = 0
    end = chain.shape[0]
    for k in range(d):
        shape = (tt_ranks[k], inp_sizes[k], out_sizes[k], tt_ranks[k + 1])
        size = int(np.prod(shape))
        core = chain[start : start + size].reshape(shape).transpose(1, 3, 0, 2)
        result[end - size : end] = core.ravel()
        start += size
        end -= size
    return result


def tt_svd(W, sizes, tt_ranks):
    """TT-SVD of a tensor: a chain of reduced SVDs, one per core but the last.

    Helper of ``matrix_to_tt``. Each step reshapes the remainder to ``[rank_k * sizes[k], -1]``,
    keeps the ``tt_ranks[k + 1]`` leading singular triplets, stores the left singular vectors as
    core ``k`` and carries ``diag(S) V`` on. A rank larger than the SVD gives is padded with zero
    columns, so the cores still have the sizes the ranks promise.

    Args:
        W: the tensor (any shape with ``prod(sizes)`` entries, read in row-major order).
        sizes: the size of each core's middle mode.
        tt_ranks: the ranks, one more than the cores.

    Returns:
        The cores, first core first, each laid out as ``[rank_k, sizes[k], rank_k+1]``,
        concatenated into one 1-D float32 array.
    """
    sizes = np.array(sizes, dtype=np.int64).ravel()
    tt_ranks = np.array(tt_ranks, dtype=np.int64).ravel()
    _check(
        tt_ranks.shape[0] == sizes.shape[0] + 1,
        "The number of tt-ranks (",
        tt_ranks.shape[0],
        ") must be one more than the number of sizes (",
        sizes.shape[0],
        ").",
    )
    _check(
        np.size(W) == np.prod(sizes),
        "W has ",
        np.size(W),
        " entries, but the sizes ask for prod(sizes) = ",
        np.prod(sizes),
        ".",
    )
    d = sizes.shape[0]
    remainder = np.array(W, dtype=np.float64, copy=True)
    pieces = []
    for k in range(d - 1):
        rank = int(tt_ranks[k + 1])
        remainder = remainder.reshape(int(tt_ranks[k] * sizes[k]), -1)
        U, S, V = np.linalg.svd(remainder, full_matrices=False)
        kept = min(rank, S.shape[0])
        left = np.zeros((U.shape[0], rank))
        left[:, :kept] = U[:, :kept]
        right = np.zeros((rank, V.shape[1]))
        right[:kept] = S[:kept, None] * V[:kept]
        pieces.append(left.ravel())
        remainder = right
    last = remainder.ravel()
    _check(
        last.shape[0] == tt_ranks[d - 1] * sizes[d - 1] * tt_ranks[d],
        "The last core has ",
        last.shape[0],
        " entries, but tt_ranks and sizes ask for ",
        tt_ranks[d - 1] * sizes[d - 1] * tt_ranks[d],
        " (the first and last rank times the remaining size).",
    )
    pieces.append(last)
    return np.concatenate(pieces).astype(np.float32)


def fc_net_to_tt_net(net):
    """Upstream's placeholder for converting every FC layer of a net into a TT layer.

    Upstream never implemented it (its body is ``pass``), and this build registers no ``TT``
    operator to convert into, so, like upstream, it leaves ``net`` unchanged and returns None.
    """
    return None
