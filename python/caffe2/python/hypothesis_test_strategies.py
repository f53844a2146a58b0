"""Hypothesis strategies for operator tests: dimensions, element values, arrays and tensors,
segment ids and lengths, (sparse) segmented tensors and lists of same-shaped tensors. Re-exported
by caffe2.python.hypothesis_test_util (tests use them as hu.tensor, hu.lengths, ...).
"""
import functools

import hypothesis.extra.numpy
import hypothesis.strategies as st
import numpy as np


def dims(min_value=1, max_value=5):
    return st.integers(min_value=min_value, max_value=max_value)


def floats(*args, **kwargs):
    """st.floats, 32 bits wide unless `width` says otherwise, so that its values fill float32
    arrays exactly (upstream's tests pass hu.floats(min_value=..., max_value=...) as elements)."""
    kwargs.setdefault("width", 32)
    return st.floats(*args, **kwargs)


def elements_of_type(dtype=np.float32, filter_=None):
    """Values for arrays of `dtype`: floats in [-1, 1], non-negative ints,
    bools."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        elems = st.floats(min_value=-1.0, max_value=1.0, width=8 * min(dtype.itemsize, 8))
    elif dtype == np.int32:
        elems = st.integers(min_value=0, max_value=2**31 - 1)
    elif dtype == np.int64:
        elems = st.integers(min_value=0, max_value=2**63 - 1)
    elif dtype == np.bool_:
        elems = st.booleans()
    else:
        raise ValueError("Unexpected dtype without elements provided")
    return elems if filter_ is None else elems.filter(filter_)


def arrays(dims, dtype=np.float32, elements=None):
    if elements is None:
        elements = elements_of_type(dtype)
    return hypothesis.extra.numpy.arrays(dtype, dims, elements=elements)


def tensor(min_dim=1, max_dim=4, dtype=np.float32, elements=None, **kwargs):
    """Arrays of min_dim..max_dim dims, each of size dims(**kwargs)."""
    dims_ = st.lists(dims(**kwargs), min_size=min_dim, max_size=max_dim)
    return dims_.flatmap(lambda d: arrays(d, dtype, elements))


def tensor1d(min_len=1, max_len=64, dtype=np.float32, elements=None):
    return tensor(1, 1, dtype, elements, min_value=min_len, max_value=max_len)


def segment_ids(size, is_sorted):
    """int32 segment ids for `size` rows (sorted ones start at 0)."""
    if size == 0:
        return st.just(np.empty(shape=[0], dtype=np.int32))
    if is_sorted:
        return arrays([size], dtype=np.int32, elements=st.booleans()).map(
            lambda x: np.cumsum(x, dtype=np.int32) - x[0]
        )
    return arrays([size], dtype=np.int32, elements=st.integers(min_value=0, max_value=2 * size))


def lengths(size, min_segments=None, max_segments=None, **kwargs):
    """int32 segment lengths (some maybe 0) that add up to `size`."""
    if min_segments is None:
        min_segments = 0
    if max_segments is None:
        max_segments = size
    assert 0 <= min_segments <= max_segments
    if size == 0 and max_segments == 0:
        return st.just(np.empty(shape=[0], dtype=np.int32))
    assert max_segments > 0, "size is not 0, need at least one segment"
    # Draw the borders between segments, then take differences.
    return (
        st.integers(min_value=max(min_segments - 1, 0), max_value=max_segments - 1)
        .flatmap(
            lambda num_borders: hypothesis.extra.numpy.arrays(
                np.int32, num_borders, elements=st.integers(min_value=0, max_value=size)
            )
        )
        .map(lambda borders: np.sort(np.append(borders, np.array([0, size], dtype=np.int32))))
        .map(lambda borders: np.diff(borders).astype(np.int32))
    )


def segmented_tensor(
    min_dim=1,
    max_dim=4,
    dtype=np.float32,
    is_sorted=True,
    elements=None,
    segment_generator=segment_ids,
    allow_empty=False,
    **kwargs,
):
    """(data, segments) with segments from segment_generator(rows)."""
    gen_empty = st.booleans() if allow_empty else st.just(False)
    data_dims_ = st.lists(dims(**kwargs), min_size=min_dim, max_size=max_dim)
    data_dims_ = st.tuples(gen_empty, data_dims_).map(
        lambda pair: ([0] if pair[0] else []) + pair[1]
    )
    return data_dims_.flatmap(
        lambda data_dims: st.tuples(
            arrays(data_dims, dtype, elements),
            segment_generator(data_dims[0], is_sorted=is_sorted),
        )
    )


def lengths_tensor(min_segments=None, max_segments=None, *args, **kwargs):
    gen = functools.partial(lengths, min_segments=min_segments, max_segments=max_segments)
    return segmented_tensor(*args, segment_generator=gen, **kwargs)


def sparse_segmented_tensor(
    min_dim=1,
    max_dim=4,
    dtype=np.float32,
    is_sorted=True,
    elements=None,
    allow_empty=False,
    segment_generator=segment_ids,
    itype=np.int64,
    **kwargs,
):
    """(data, indices into its rows, segments of the indices)."""
    gen_empty = st.booleans() if allow_empty else st.just(False)
    data_dims_ = st.lists(dims(**kwargs), min_size=min_dim, max_size=max_dim)
    all_dims_ = st.tuples(gen_empty, data_dims_).flatmap(
        lambda pair: st.tuples(
            st.just(pair[1]),
            (st.integers(min_value=1, max_value=pair[1][0]) if not pair[0] else st.just(0)),
        )
    )
    return all_dims_.flatmap(
        lambda d: st.tuples(
            arrays(d[0], dtype, elements),
            arrays(d[1], dtype=itype, elements=st.integers(min_value=0, max_value=d[0][0] - 1)),
            segment_generator(d[1], is_sorted=is_sorted),
        )
    )


def sparse_lengths_tensor(**kwargs):
    return sparse_segmented_tensor(segment_generator=lengths, **kwargs)


def tensors(n, min_dim=1, max_dim=4, dtype=np.float32, elements=None, **kwargs):
    """n arrays of one common shape."""
    dims_ = st.lists(dims(**kwargs), min_size=min_dim, max_size=max_dim)
    return dims_.flatmap(lambda d: st.lists(arrays(d, dtype, elements), min_size=n, max_size=n))


def tensors1d(n, min_len=1, max_len=64, dtype=np.float32, elements=None):
    return tensors(n, 1, 1, dtype, elements, min_value=min_len, max_value=max_len)
