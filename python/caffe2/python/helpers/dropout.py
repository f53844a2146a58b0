"""Dropout helper."""


def dropout(model, blob_in, blob_out, use_cudnn=False, **kwargs):
    """Dropout(in, [out, `_<out>_mask`]); is_test is required."""
    if "is_test" not in kwargs:
        raise ValueError("brew.dropout needs is_test (1 for inference, 0 for training)")
    kwargs["engine"] = "CUDNN" if use_cudnn else "DEFAULT"
    return model.net.Dropout(blob_in, [blob_out, "_" + blob_out + "_mask"], **kwargs)[0]
