"""Algebra helpers: transpose, sum, batch_mat_mul."""


def transpose(model, blob_in, blob_out, use_cudnn=False, **kwargs):
    """Transpose (engine CUDNN when use_cudnn)."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Transpose(blob_in, blob_out, **kwargs)


def sum(model, blob_in, blob_out, **kwargs):
    """Sum of the blobs in blob_in."""
    return model.net.Sum(blob_in, blob_out, **kwargs)


def batch_mat_mul(model, blob_in, blob_out, enable_tensor_core=False, **kwargs):
    """BatchMatMul (engine TENSORCORE when asked)."""
    if enable_tensor_core:
        kwargs["engine"] = "TENSORCORE"
    return model.net.BatchMatMul(blob_in, blob_out, **kwargs)
