"""Control-flow helpers: cond (If) and loop (While)."""


def _subnet_arg(net):
    return net.Proto() if hasattr(net, "Proto") else net


def cond(model, cond_blob, external_blobs, then_model, else_model=None):
    """If(cond_blob) running then_model's net (else else_model's)."""
    kwargs = {"then_net": _subnet_arg(then_model.net)}
    if else_model is not None:
        kwargs["else_net"] = _subnet_arg(else_model.net)
    external = [str(b) for b in external_blobs]
    return model.net.If([cond_blob] + external, external, **kwargs)


def loop(model, cond_blob, external_blobs, loop_model, cond_model=None):
    """While(cond_blob) running loop_model's net (cond_model's net
    recomputes the condition)."""
    kwargs = {"loop_net": _subnet_arg(loop_model.net)}
    if cond_model is not None:
        kwargs["cond_net"] = _subnet_arg(cond_model.net)
    external = [str(b) for b in external_blobs]
    return model.net.While([cond_blob] + external, external, **kwargs)
