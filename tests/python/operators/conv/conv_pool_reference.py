"""Numpy references for convolution and pooling, written from the spec (ops §1.2.1-§1.2.3):
output sizes for every legacy_pad mode, direct (sliding-window) conv and pooling on NCHW arrays."""
import itertools
import math

import numpy as np

NOTSET, VALID, SAME, CAFFE_LEGACY_POOLING = 0, 1, 2, 3


def out_size(n, k, s, d=1, mode=NOTSET, head=0, tail=0):
    """(out, pad_head, pad_tail) of one spatial dim, as the spec's formulas give them."""
    dk = d * (k - 1) + 1
    if mode == VALID:
        return (n - dk) // s + 1, 0, 0
    if mode == SAME:
        out = -(-n // s)
        needed = max(0, (out - 1) * s + k - n)
        return out, needed // 2, needed - needed // 2
    if mode == CAFFE_LEGACY_POOLING:
        out = int(math.ceil((n + 2 * head - dk) / s)) + 1
        if head > 0 and (out - 1) * s >= n + head:
            out -= 1
        floor_out = (n + 2 * head - dk) // s + 1
        return out, head, head + s * (out - floor_out)
    return (n + head + tail - dk) // s + 1, head, tail


def geometry(spatial, kernel, strides, dilations, heads, tails, mode=NOTSET):
    """Per-dim (outs, heads, tails) for the given per-dim arguments."""
    res = [
        out_size(n, k, s, d, mode, h, t)
        for n, k, s, d, h, t in zip(spatial, kernel, strides, dilations, heads, tails)
    ]
    return [r[0] for r in res], [r[1] for r in res], [r[2] for r in res]


def _windows(xp, kernel, strides, dilations, outs):
    """Yields (kernel offset, view of xp (N, C, outs...) at that offset of every window)."""
    for offs in itertools.product(*[range(k) for k in kernel]):
        sl = tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, s, n in zip(offs, dilations, strides, outs)
        )
        yield offs, xp[(slice(None), slice(None)) + sl]


def _pad(x, heads, tails, value):
    # Tails may be shorter than what the windows need only when they are never read.
    widths = [(0, 0), (0, 0)] + [(h, max(t, 0)) for h, t in zip(heads, tails)]
    return np.pad(x, widths, constant_values=value)


def conv_nchw(X, W, b, strides, dilations, heads, tails, group=1):
    """Direct convolution of X (N, C, spatial...) with W (M, C/group, k...)."""
    spatial, kernel = X.shape[2:], W.shape[2:]
    outs = [
        (n + h + t - (d * (k - 1) + 1)) // s + 1
        for n, h, t, k, s, d in zip(spatial, heads, tails, kernel, strides, dilations)
    ]
    xp = _pad(X.astype(np.float64), heads, tails, 0.0)
    N, C, M = X.shape[0], X.shape[1], W.shape[0]
    cg, mg = C // group, M // group
    Y = np.zeros((N, M) + tuple(outs))
    for offs, view in _windows(xp, kernel, strides, dilations, outs):
        for g in range(group):
            w = W[(slice(g * mg, (g + 1) * mg), slice(None)) + offs].astype(np.float64)
            Y[:, g * mg : (g + 1) * mg] += np.einsum(
                "mc,nc...->nm...", w, view[:, g * cg : (g + 1) * cg]
            )
    if b is not None:
        Y += b.reshape((1, M) + (1,) * len(outs))
    return Y.astype(np.float32)


def conv_grad_nchw(X, W, dY, strides, dilations, heads, tails, group=1):
    """(dW, db, dX) of conv_nchw for the output gradient dY: conv is linear in X and in W, so each
    kernel offset contributes dY x (window view of X) to dW and W^T dY to the same view of dX."""
    spatial, kernel, outs = X.shape[2:], W.shape[2:], dY.shape[2:]
    xp = _pad(X.astype(np.float64), heads, tails, 0.0)
    dxp = np.zeros_like(xp)
    dy = dY.astype(np.float64)
    N, C, M = X.shape[0], X.shape[1], W.shape[0]
    cg, mg = C // group, M // group
    dW = np.zeros(W.shape)
    for offs, view in _windows(xp, kernel, strides, dilations, outs):
        sl = tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, s, n in zip(offs, dilations, strides, outs)
        )
        for g in range(group):
            ms, cs = slice(g * mg, (g + 1) * mg), slice(g * cg, (g + 1) * cg)
            dW[(ms, slice(None)) + offs] += np.einsum(
                "nmp,ncp->mc", dy[:, ms].reshape(N, mg, -1), view[:, cs].reshape(N, cg, -1)
            )
            w = W[(ms, slice(None)) + offs].astype(np.float64)
            dxp[(slice(None), cs) + sl] += np.einsum("mc,nm...->nc...", w, dy[:, ms])
    dX = dxp[(slice(None), slice(None)) + tuple(slice(h, h + n) for h, n in zip(heads, spatial))]
    db = dy.sum(axis=tuple(i for i in range(dy.ndim) if i != 1))
    return dW.astype(np.float32), db.astype(np.float32), dX.astype(np.float32)


def pool_nchw(X, kind, kernel, strides, dilations, heads, tails, p=2.0):
    """Max / average / Lp pooling over the in-bounds elements of each window (empty windows
    give 0)."""
    spatial = X.shape[2:]
    outs = [
        (n + h + t - (d * (k - 1) + 1)) // s + 1
        for n, h, t, k, s, d in zip(spatial, heads, tails, kernel, strides, dilations)
    ]
    xp = _pad(X.astype(np.float64), heads, tails, np.nan)
    vals = np.stack([view for _, view in _windows(xp, kernel, strides, dilations, outs)])
    inside = ~np.isnan(vals)
    count = inside.sum(axis=0)
    if kind == "max":
        Y = np.where(inside, vals, -np.inf).max(axis=0)
    elif kind == "avg":
        Y = np.where(inside, vals, 0).sum(axis=0) / np.maximum(count, 1)
    else:
        Y = (np.abs(np.where(inside, vals, 0)) ** p).sum(axis=0) ** (1.0 / p)
    return np.where(count > 0, Y, 0).astype(np.float32)


def pool_grad_nchw(X, Y, dY, kind, kernel, strides, dilations, heads, tails, p=2.0):
    """dX of pool_nchw: every tied max gets dY; the average splits dY over the in-bounds
    elements."""
    spatial = X.shape[2:]
    outs = list(Y.shape[2:])
    xp = _pad(X.astype(np.float64), heads, tails, np.nan)
    dxp = np.zeros_like(xp)
    count = sum(~np.isnan(view) for _, view in _windows(xp, kernel, strides, dilations, outs))
    for offs, view in _windows(xp, kernel, strides, dilations, outs):
        sl = tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, s, n in zip(offs, dilations, strides, outs)
        )
        inside = ~np.isnan(view)
        v = np.where(inside, view, 0)
        if kind == "max":
            g = np.where(inside & (v == Y), dY, 0)
        elif kind == "avg":
            g = np.where(inside, dY / np.maximum(count, 1), 0)
        else:
            g = np.where(
                inside & (Y != 0),
                dY * np.sign(v) * np.abs(v) ** (p - 1) / np.where(Y != 0, Y, 1.0) ** (p - 1),
                0,
            )
        dxp[(slice(None), slice(None)) + sl] += g
    crop = tuple(slice(h, h + n) for h, n in zip(heads, spatial))
    return dxp[(slice(None), slice(None)) + crop].astype(np.float32)


def to_nhwc(x):
    return np.ascontiguousarray(np.moveaxis(x, 1, -1))


def to_nchw(x):
    return np.ascontiguousarray(np.moveaxis(x, -1, 1))


def conv_transpose_nchw(X, W, b, strides, dilations, heads, tails, adjs, group=1):
    """Scatter form of the transposed convolution of X (N, C, in...) with W (C, M/group, k...)."""
    N, C = X.shape[:2]
    spatial, kernel = X.shape[2:], W.shape[2:]
    cg, mg = C // group, W.shape[1]
    full = [
        (n - 1) * s + d * (k - 1) + 1 + a
        for n, s, d, k, a in zip(spatial, strides, dilations, kernel, adjs)
    ]
    Y = np.zeros((N, mg * group) + tuple(full))
    for offs in itertools.product(*[range(k) for k in kernel]):
        sl = tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, s, n in zip(offs, dilations, strides, spatial)
        )
        for g in range(group):
            w = W[(slice(g * cg, (g + 1) * cg), slice(None)) + offs].astype(np.float64)
            Y[(slice(None), slice(g * mg, (g + 1) * mg)) + sl] += np.einsum(
                "cm,nc...->nm...", w, X[:, g * cg : (g + 1) * cg]
            )
    Y = Y[
        (slice(None), slice(None)) + tuple(slice(h, f - t) for h, t, f in zip(heads, tails, full))
    ]
    if b is not None:
        Y += b.reshape((1, -1) + (1,) * len(spatial))
    return Y.astype(np.float32)
