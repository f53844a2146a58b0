"""Concat helpers."""


def concat(model, blobs_in, blob_out, **kwargs):
    """Concat(blobs, [out, `_<out>_concat_dims`]); returns out. `order` is
    dropped when `axis` is given."""
    if kwargs.get("order") and kwargs.get("axis"):
        kwargs.pop("order")
    return model.net.Concat(blobs_in, [blob_out, "_" + blob_out + "_concat_dims"], **kwargs)[0]


def depth_concat(model, blobs_in, blob_out, **kwargs):
    """[Deprecated] concat."""
    return concat(model, blobs_in, blob_out, **kwargs)
