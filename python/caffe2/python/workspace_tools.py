"""Graph tools of caffe2.python.workspace: shape and type inference, operator costs, graph
transforms, the Predictor and the mint web app. They hold no state of their own; workspace
re-exports them.
"""
import multiprocessing
import socket

from caffe2.proto import caffe2_pb2
import caffe2.python._import_c_extension as C
from caffe2.python.workspace_names import StringifyProto


def _GetFreeFlaskPort():
    """A free TCP port, preferring mint's default 5000."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if sock.connect_ex(("127.0.0.1", 5000)) != 0:
            return 5000
    finally:
        sock.close()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("", 0))
        return sock.getsockname()[1]
    finally:
        sock.close()


def StartMint(root_folder=None, port=None):
    """Starts the mint web app in a subprocess (mint is not shipped)."""
    from caffe2.python.mint import app

    if root_folder is None:
        root_folder = C.root_folder()
    if port is None:
        port = _GetFreeFlaskPort()
    process = multiprocessing.Process(target=app.main, args=(["-p", str(port), "-r", root_folder],))
    process.start()
    print("Mint running at http://{}:{}".format(socket.getfqdn(), port))
    return process


def Predictor(init_net, predict_net):
    return C.Predictor(StringifyProto(init_net), StringifyProto(predict_net))


def GetOperatorCost(operator, blobs):
    return C.get_operator_cost(StringifyProto(operator), blobs)


def InferShapesAndTypes(nets, blob_dimensions=None):
    """Infers shapes and types of the blobs of `nets`.

    Inference is seeded from the current workspace, or from
    `blob_dimensions` ({blob name: dims}) when given. Returns
    ({name: dims}, {name: TensorProto.DataType}) for the blobs whose shape
    could be inferred.
    """
    net_protos = [StringifyProto(n.Proto() if hasattr(n, "Proto") else n) for n in nets]
    if blob_dimensions is None:
        serialized = C.infer_shapes_and_types_from_workspace(net_protos)
    else:
        serialized = C.infer_shapes_and_types_from_map(net_protos, blob_dimensions)
    blobdesc = caffe2_pb2.TensorShapes()
    blobdesc.ParseFromString(serialized)
    shapes = {}
    types = {}
    for ts in blobdesc.shapes:
        if not ts.unknown_shape:
            shapes[ts.name] = list(ts.dims)
            types[ts.name] = ts.data_type
    return shapes, types


def ApplyTransform(transform_key, net):
    """The NetDef `net` rewritten by the graph transform `transform_key` (caffe2.python.
    net_transforms lists them); a RuntimeError names the registered ones for an unknown key."""
    from caffe2.python import net_transforms

    key = transform_key.decode() if isinstance(transform_key, bytes) else str(transform_key)
    return net_transforms.apply_transform(key, net)


def ApplyTransformIfFaster(
    transform_key, net, init_net, warmup_runs=5, main_runs=10, improvement_threshold=1.01
):
    """Runs init_net, applies the transform, times both nets (warmup_runs, then main_runs runs
    each) and returns the transformed net when it runs at least improvement_threshold times as
    fast, else a copy of `net`. The choice depends on the timing unless the threshold decides it
    (0: always the transformed net; a huge value: never)."""
    from caffe2.python import workspace

    workspace.RunNetOnce(init_net)
    transformed = ApplyTransform(transform_key, net)
    original = caffe2_pb2.NetDef()
    original.CopyFrom(net)
    times = []
    for candidate, suffix in ((original, "_original"), (transformed, "_transformed")):
        timed = caffe2_pb2.NetDef()
        timed.CopyFrom(candidate)
        timed.name = (candidate.name or "net") + suffix
        workspace.CreateNet(timed, True)
        times.append(workspace.BenchmarkNet(timed.name, warmup_runs, main_runs, False)[0])
        C.delete_net(timed.name)
    if times[1] * float(improvement_threshold) <= times[0]:
        return transformed
    return original
