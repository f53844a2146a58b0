"""Control-flow helpers: `brew.cond` (an If op) and `brew.loop` (a While op),
built with caffe2.python.control_ops_util from the nets of sub-models."""
from caffe2.python.control_ops_util import add_if_op, add_while_op


def cond(model, cond_blob, external_blobs, then_model, else_model=None):
    """Runs then_model's net when cond_blob (one-element bool) is true, else
    else_model's net (if any). external_blobs are the outer blob names the
    branches may see; other blobs the branches write stay local to them."""
    add_if_op(
        model.net,
        cond_blob,
        external_blobs,
        then_model.net,
        else_model.net if else_model else None,
    )


def loop(model, cond_blob, external_blobs, loop_model, cond_model=None):
    """Runs loop_model's net while cond_blob (one-element bool) is true;
    cond_model's net, when given, recomputes cond_blob before each test."""
    add_while_op(
        model.net,
        cond_blob,
        external_blobs,
        loop_model.net,
        cond_model.net if cond_model else None,
    )
