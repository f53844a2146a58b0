"""Pooling helpers: max_pool, average_pool, max_pool_with_index."""


def max_pool(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """MaxPool (kernel, stride, pad, global_pooling...)."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.MaxPool(blob_in, blob_out, order=order, **kwargs)


def average_pool(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """AveragePool (kernel, stride, pad, global_pooling...)."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.AveragePool(blob_in, blob_out, order=order, **kwargs)


def max_pool_with_index(model, blob_in, blob_out, order="NCHW", **kwargs):
    """MaxPoolWithIndex: outputs (blob_out, `<out>_index`); NCHW only."""
    assert order == "NCHW", "order {} is not supported".format(order)
    return model.net.MaxPoolWithIndex(
        blob_in, [blob_out, blob_out + "_index"], order=order, **kwargs
    )[0]
