"""What this build of caffe2 contains: backends and their versions, and the operator engines per
device.

Beyond upstream (which only had ``workspace.C.get_build_options()``)::

    from caffe2.python import build_info
    build_info.build_options["USE_DNNL"]     # "ON" / "OFF", as get_build_options() reports it
    build_info.engines("Conv")               # {"CPU": ["DNNL", "EIGEN"], "CUDA": ["CUDNN"]}
    build_info.engine_preference()           # {"CPU": ["DNNL"], "CUDA": ["CUDNN"]}
    print(build_info.summary())              # or: python -m caffe2.python.build_info

Which engine runs an op: the engines named in its ``engine`` field, then the per-op and global
engine preferences (``workspace.SetGlobalEnginePref``), then the default kernel; a named engine that
this build lacks is skipped (docs/determinism.md).
"""
from caffe2.proto import caffe2_pb2
from caffe2.python import workspace

C = workspace.C

build_options = dict(C.get_build_options())

_DEVICE_NAMES = {caffe2_pb2.CPU: "CPU", caffe2_pb2.CUDA: "CUDA"}


def _registered_keys():
    keys = {"CPU": list(C.registered_cpu_operators())}
    if workspace.has_gpu_support:
        keys["CUDA"] = list(C.registered_cuda_operators())
    return keys


def engines(op_type=None):
    """The engines registered for op_type (or for any op when None), per device, sorted.

    The default kernel of an op is not an engine and is not listed.
    """
    out = {}
    for device, keys in _registered_keys().items():
        found = set()
        for key in keys:
            base, sep, engine = key.partition("_ENGINE_")
            if sep and (op_type is None or base == op_type):
                found.add(engine)
        out[device] = sorted(found)
    return out


def engine_preference():
    """The global engine preference in force, per device name."""
    return {
        _DEVICE_NAMES.get(device, str(device)): list(pref)
        for device, pref in C.global_engine_pref().items()
    }


def has_backend(name):
    """True when build_options says USE_<name> is ON (e.g. "CUDA", "DNNL", "GLOO", "NCCL")."""
    return build_options.get("USE_" + name.upper()) == "ON"


def summary():
    """A human-readable description of the build."""
    lines = [
        "caffe2 %s (%s)" % (build_options.get("VERSION", "?"), build_options.get("BUILD_TYPE", "?"))
    ]
    for key in sorted(build_options):
        lines.append("  %-18s %s" % (key, build_options[key]))
    lines.append("  engines:")
    for device, names in sorted(engines().items()):
        lines.append("    %-6s %s" % (device, ", ".join(names) or "-"))
    lines.append("  engine preference:")
    for device, names in sorted(engine_preference().items()):
        lines.append("    %-6s %s" % (device, ", ".join(names) or "-"))
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
