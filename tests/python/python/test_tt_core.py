"""caffe2.python.tt_core: TT-SVD of FC weights, random TT-cores, their layouts and size checks.

The references below rebuild the matrix from the cores with numpy alone, in the layout the module
documents, and apply the cores to an input the way upstream's TT operator does (this build has no
TT operator; the check against it runs only if one is registered)."""
import numpy as np
import pytest

from caffe2.python import core, tt_core, workspace


def reconstruct_from_op_layout(cores, inp_sizes, out_sizes, tt_ranks):
    """W[o, i] from matrix_to_tt's layout: last core first, core k as [inp, r_k+1, r_k, out]."""
    d = len(inp_sizes)
    chunks = {}
    end = cores.size
    for k in range(d):
        shape = (inp_sizes[k], tt_ranks[k + 1], tt_ranks[k], out_sizes[k])
        size = int(np.prod(shape))
        chunks[k] = cores[end - size : end].reshape(shape).astype(np.float64)
        end -= size
    assert end == 0
    # Contract left to right: full[(i_0..i_k), (o_0..o_k), r_k+1].
    full = np.ones((1, 1, 1))
    for k in range(d):
        core_k = chunks[k].transpose(2, 0, 3, 1)  # [r_k, inp, out, r_k+1]
        full = np.einsum("iar,rjbs->ijabs", full, core_k)
        full = full.reshape(full.shape[0] * full.shape[1], full.shape[2] * full.shape[3], -1)
    return full[:, :, 0].T  # [prod(out), prod(inp)]


def apply_like_tt_op(X, cores, inp_sizes, out_sizes, tt_ranks):
    """Y = X * W^T computed core by core as the TT operator does: last core first, each a
    [inp_k * r_k+1, r_k * out_k] matrix, the new output digit moved to the front after each step."""
    batch = X.shape[0]
    buf = X.astype(np.float64).reshape(batch, -1)
    offset = 0
    for k in reversed(range(len(inp_sizes))):
        rows = inp_sizes[k] * tt_ranks[k + 1]
        cols = tt_ranks[k] * out_sizes[k]
        mat = cores[offset : offset + rows * cols].reshape(rows, cols)
        out = buf.reshape(-1, rows).dot(mat)
        buf = out.reshape(-1, out_sizes[k]).T  # the out digit k goes to the front
        offset += rows * cols
    assert offset == cores.size
    # buf is [(o_0..o_d-1), batch]
    return buf.reshape(-1, batch).T


def test_full_rank_tt_reproduces_non_square_fc_weight():
    rng = np.random.RandomState(7)
    inp_sizes, out_sizes = [2, 3, 4], [3, 2, 2]
    W = rng.randn(12, 24).astype(np.float32)  # FC weight: [prod(out), prod(inp)]
    tt_ranks = [1, 6, 8, 1]  # as large as the SVDs give
    cores = tt_core.matrix_to_tt(W, inp_sizes, out_sizes, tt_ranks)
    assert cores.dtype == np.float32
    sizes = [r0 * n * m * r1 for r0, n, m, r1 in zip(tt_ranks, inp_sizes, out_sizes, tt_ranks[1:])]
    assert cores.shape == (sum(sizes),)
    np.testing.assert_allclose(
        reconstruct_from_op_layout(cores, inp_sizes, out_sizes, tt_ranks), W, atol=1e-5
    )
    X = rng.randn(5, 24).astype(np.float32)
    Y = apply_like_tt_op(X, cores, inp_sizes, out_sizes, tt_ranks)
    np.testing.assert_allclose(Y, X.dot(W.T), rtol=1e-4, atol=1e-4)


def test_upstream_square_case_matches_fc_and_truncation_error():
    # Upstream's own check: a 256x256 weight, four 4x4 cores, full and rank-1 TT against FC.
    np.random.seed(1234)
    X = np.expand_dims(np.random.rand(256).astype(np.float32), axis=0)
    W = np.random.rand(256, 256).astype(np.float32)
    b = np.zeros(256, dtype=np.float32)
    sizes = [4, 4, 4, 4]
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("W", W)
    workspace.FeedBlob("b", b)
    workspace.RunOperatorOnce(core.CreateOperator("FC", ["X", "W", "b"], ["Y"]))
    Y_fc = workspace.FetchBlob("Y").flatten()

    full = [1, 16, 256, 16, 1]
    full_cores = tt_core.matrix_to_tt(W, sizes, sizes, full)
    Y_full = apply_like_tt_op(X, full_cores, sizes, sizes, full).flatten()
    assert np.linalg.norm(Y_fc - Y_full) < 1e-3

    rank_one = [1, 1, 1, 1, 1]
    sparse_cores = tt_core.matrix_to_tt(W, sizes, sizes, rank_one)
    assert sparse_cores.shape == (4 * 16,)
    Y_sparse = apply_like_tt_op(X, sparse_cores, sizes, sizes, rank_one).flatten()
    # Upstream's expected error of the rank-1 approximation.
    assert abs(np.linalg.norm(Y_fc - Y_sparse) - 39.974) < 1e-3


def test_truncated_ranks_approximate_better_as_ranks_grow():
    rng = np.random.RandomState(3)
    W = rng.randn(16, 16)
    sizes = [4, 4]
    errors = []
    for rank in [1, 4, 8, 16]:
        cores = tt_core.matrix_to_tt(W, sizes, sizes, [1, rank, 1])
        approx = reconstruct_from_op_layout(cores, sizes, sizes, [1, rank, 1])
        errors.append(np.linalg.norm(approx - W))
    assert errors[0] > errors[1] > errors[2] > 1.0 > 1e-4 > errors[3]
    # With two cores the TT-SVD is the plain truncated SVD of the regrouped matrix.
    regrouped = W.T.reshape(4, 4, 4, 4).transpose(0, 2, 1, 3).reshape(16, 16)
    S = np.linalg.svd(regrouped, compute_uv=False)
    np.testing.assert_allclose(errors[1], np.sqrt(np.sum(S[4:] ** 2)), rtol=1e-4)


def test_tt_svd_recovers_low_rank_train_and_pads_large_ranks():
    rng = np.random.RandomState(11)
    sizes, ranks = [3, 4, 5], [1, 2, 3, 1]
    truth = [rng.randn(ranks[k], sizes[k], ranks[k + 1]) for k in range(3)]
    tensor = np.einsum("aib,bjc,ckd->ijk", *truth)
    cores = tt_core.tt_svd(tensor, np.array(sizes), np.array(ranks))
    assert cores.shape == (1 * 3 * 2 + 2 * 4 * 3 + 3 * 5 * 1,)
    g0 = cores[:6].reshape(1, 3, 2)
    g1 = cores[6:30].reshape(2, 4, 3)
    g2 = cores[30:].reshape(3, 5, 1)
    np.testing.assert_allclose(np.einsum("aib,bjc,ckd->ijk", g0, g1, g2), tensor, atol=1e-4)
    # The first core holds orthonormal left singular vectors.
    np.testing.assert_allclose(g0[0].T.dot(g0[0]), np.eye(2), atol=1e-5)

    # Rank 4 after the first core of size 3: one zero column pads the SVD's three.
    padded = tt_core.tt_svd(tensor, [3, 4, 5], [1, 4, 3, 1])
    p0 = padded[:12].reshape(1, 3, 4)
    p1 = padded[12:60].reshape(4, 4, 3)
    p2 = padded[60:].reshape(3, 5, 1)
    np.testing.assert_array_equal(p0[0, :, 3], 0)
    np.testing.assert_allclose(np.einsum("aib,bjc,ckd->ijk", p0, p1, p2), tensor, atol=1e-4)


def split_init_cores(cores, inp_sizes, out_sizes, tt_ranks):
    chunks, start = [], 0
    for k in range(len(inp_sizes)):
        shape = (tt_ranks[k], inp_sizes[k], out_sizes[k], tt_ranks[k + 1])
        size = int(np.prod(shape))
        chunks.append(cores[start : start + size].reshape(shape).astype(np.float64))
        start += size
    assert start == cores.size
    return chunks


def test_init_tt_cores_shapes_orthogonality_and_variance():
    inp_sizes, out_sizes, tt_ranks = [4, 4, 4], [4, 4, 4], [1, 8, 8, 1]
    cores = tt_core.init_tt_cores(inp_sizes, out_sizes, tt_ranks)
    assert cores.dtype == np.float32
    assert cores.shape == (1 * 16 * 8 + 8 * 16 * 8 + 8 * 16 * 1,)
    np.testing.assert_array_equal(cores, tt_core.init_tt_cores(inp_sizes, out_sizes, tt_ranks))
    assert not np.allclose(cores, tt_core.init_tt_cores(inp_sizes, out_sizes, tt_ranks, seed=5))

    d = len(inp_sizes)
    scale = 0.1 / (np.prod(inp_sizes) * np.prod(tt_ranks)) ** (1.0 / d)
    chunks = split_init_cores(cores, inp_sizes, out_sizes, tt_ranks)
    for k in range(d - 1):  # every core but the last: orthonormal columns, times the scale
        tall = chunks[k].reshape(-1, tt_ranks[k + 1]) / scale
        np.testing.assert_allclose(tall.T.dot(tall), np.eye(tt_ranks[k + 1]), atol=1e-4)

    # The product of the cores is the TT-contraction of standard normal cores, scaled by
    # scale ** d: each entry has variance prod(inner ranks) * scale ** (2 d). One draw's variance
    # estimate spreads by about 20% (the entries are correlated), so average over ten seeds.
    expected_var = np.prod(tt_ranks[1:-1]) * scale ** (2 * d)
    ratios, means = [], []
    for seed in range(10):
        seeded = tt_core.init_tt_cores(inp_sizes, out_sizes, tt_ranks, seed=seed)
        chunks = split_init_cores(seeded, inp_sizes, out_sizes, tt_ranks)
        full = chunks[0]
        for k in range(1, d):
            full = np.tensordot(full, chunks[k], axes=([-1], [0]))
        ratios.append(np.var(full.reshape(full.shape[1:-1])) / expected_var)
        means.append(np.mean(full))
    assert 0.85 < np.mean(ratios) < 1.15, ratios
    assert abs(np.mean(means)) < 0.05 * np.sqrt(expected_var), means


def test_init_tt_cores_single_core_and_rank_check():
    cores = tt_core.init_tt_cores([3], [5], [1, 1], seed=2)
    np.random.seed(2)
    np.testing.assert_allclose(cores, 0.1 / 3.0 * np.random.normal(0, 1, 15), rtol=1e-6)
    with pytest.raises(ValueError, match="must not exceed"):
        tt_core.init_tt_cores([2, 2], [2, 2], [1, 5, 1])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tt_core.init_tt_cores([2, 2], [2], [1, 2, 1]), "number of output dimensions"),
        (lambda: tt_core.init_tt_cores([2, 2], [2, 2], [1, 1]), "number of tt-ranks"),
        (lambda: tt_core.init_tt_cores([2, 0], [2, 2], [1, 1, 1]), "positive integer"),
        (lambda: tt_core.matrix_to_tt(np.ones((4, 4)), [2, 2], [2], [1, 1, 1]), "output dim"),
        (lambda: tt_core.matrix_to_tt(np.ones((4, 4)), [2, 2], [2, 2], [1, 2]), "tt-ranks"),
        (lambda: tt_core.matrix_to_tt(np.ones((4, 8)), [2, 2], [2, 2], [1, 2, 1]), "columns"),
        (lambda: tt_core.matrix_to_tt(np.ones((8, 4)), [2, 4], [2, 2], [1, 2, 1]), "rows"),
        (lambda: tt_core.matrix_to_tt(np.ones((4, 4)), [2, 2], [2, 2], [2, 2, 1]), "must be 1"),
        (lambda: tt_core.matrix_to_tt(np.ones(16), [2, 2], [2, 2], [1, 2, 1]), "2-D"),
        (lambda: tt_core.tt_svd(np.ones(12), [3, 4], [1, 2]), "one more"),
        (lambda: tt_core.tt_svd(np.ones(12), [3, 5], [1, 2, 1]), "entries"),
    ],
)
def test_inconsistent_sizes_raise(call, message):
    with pytest.raises(tt_core.TTSizeError, match=message) as info:
        call()
    # Upstream asserted these: callers may catch either AssertionError or ValueError.
    assert isinstance(info.value, AssertionError) and isinstance(info.value, ValueError)


def test_fc_net_to_tt_net_is_upstreams_no_op():
    net = core.Net("fc_net")
    net.FC(["X", "W", "b"], "Y")
    before = net.Proto().SerializeToString()
    assert tt_core.fc_net_to_tt_net(net) is None
    assert net.Proto().SerializeToString() == before


@pytest.mark.skipif(
    "TT" not in workspace.C.registered_operators(), reason="this build registers no TT operator"
)
def test_tt_operator_matches_fc():
    rng = np.random.RandomState(5)
    sizes, ranks = [4, 4, 4], [1, 16, 16, 1]
    X = rng.rand(1, 64).astype(np.float32)
    W = rng.rand(64, 64).astype(np.float32)
    b = rng.rand(64).astype(np.float32)
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("b", b)
    workspace.FeedBlob("cores", tt_core.matrix_to_tt(W, sizes, sizes, ranks))
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "TT", ["X", "b", "cores"], ["Y"], inp_sizes=sizes, out_sizes=sizes, tt_ranks=ranks
        )
    )
    np.testing.assert_allclose(workspace.FetchBlob("Y"), X.dot(W.T) + b, rtol=1e-3, atol=1e-3)
