"""Drawing nets: pydot graphs of ops and blobs, PNG rendering through
graphviz, and a JSON dump that needs neither.

pydot is optional: when it is missing the module still imports, prints a
note, and only the pydot functions fail (GetGraphInJson works without it).
Debian packages: python3-pydot and graphviz (for `dot`).
"""
import argparse
import json
import logging
import struct
import zlib
from collections import defaultdict

from caffe2.proto import caffe2_pb2
from caffe2.python import utils

logger = logging.getLogger(__name__)
logger.setLevel(logging.INFO)

try:
    import pydot
except ImportError:
    logger.info(
        "pydot is not installed (Debian: python3-pydot, plus "
        "graphviz to render); only GetGraphInJson works."
    )
    print("net_drawer will not run correctly. Please install the correct " "dependencies.")
    pydot = None

OP_STYLE = {"shape": "box", "color": "#0F9D58", "style": "filled", "fontcolor": "#FFFFFF"}
BLOB_STYLE = {"shape": "octagon"}


def _require_pydot():
    if pydot is None:
        raise ImportError(
            "net_drawer needs pydot (Debian: python3-pydot) and graphviz "
            "to draw graphs; GetGraphInJson works without them"
        )


def _rectify_operator_and_name(operators_or_net, name):
    """(ops, graph name) of a NetDef, an object with Proto(), or a list
    of ops."""
    if isinstance(operators_or_net, caffe2_pb2.NetDef):
        operators = operators_or_net.op
        if name is None:
            name = operators_or_net.name
    elif hasattr(operators_or_net, "Proto"):
        net = operators_or_net.Proto()
        if not isinstance(net, caffe2_pb2.NetDef):
            raise RuntimeError("Expecting NetDef, but got {}".format(type(net)))
        operators = net.op
        if name is None:
            name = net.name
    else:
        operators = operators_or_net
        if name is None:
            name = "unnamed"
    return operators, name


def _escape_label(name):
    # json.dumps gives a quoted string graphviz accepts as a node name.
    return json.dumps(name)


def GetOpNodeProducer(append_output, **kwargs):
    """A function (op, op_id) -> pydot.Node labelled `<name>/<type>
    (op#<id>)`, plus the outputs when append_output."""

    def ReallyGetOpNode(op, op_id):
        if op.name:
            node_name = "%s/%s (op#%d)" % (op.name, op.type, op_id)
        else:
            node_name = "%s (op#%d)" % (op.type, op_id)
        if append_output:
            for output_name in op.output:
                node_name += "\n" + output_name
        return pydot.Node(node_name, **kwargs)

    return ReallyGetOpNode


def GetBlobNodeProducer(**kwargs):
    def ReallyGetBlobNode(node_name, label):
        return pydot.Node(node_name, label=label, **kwargs)

    return ReallyGetBlobNode


def GetPydotGraph(
    operators_or_net, name=None, rankdir="LR", node_producer=None, blob_node_producer=None
):
    """A pydot.Dot with op nodes and blob nodes (one per blob version)."""
    _require_pydot()
    op_node_producer = node_producer or GetOpNodeProducer(False, **OP_STYLE)
    if blob_node_producer is None:
        blob_node_producer = GetBlobNodeProducer(**BLOB_STYLE)
    operators, name = _rectify_operator_and_name(operators_or_net, name)
    graph = pydot.Dot(name, rankdir=rankdir)
    pydot_nodes = {}
    pydot_node_counts = defaultdict(int)
    for op_id, op in enumerate(operators):
        op_node = op_node_producer(op, op_id)
        graph.add_node(op_node)
        for input_name in op.input:
            if input_name not in pydot_nodes:
                input_node = blob_node_producer(
                    _escape_label(input_name + str(pydot_node_counts[input_name])),
                    label=_escape_label(input_name),
                )
                pydot_nodes[input_name] = input_node
            else:
                input_node = pydot_nodes[input_name]
            graph.add_node(input_node)
            graph.add_edge(pydot.Edge(input_node, op_node))
        for output_name in op.output:
            if output_name in pydot_nodes:
                # A blob written again is a new version: a new node.
                pydot_node_counts[output_name] += 1
            output_node = blob_node_producer(
                _escape_label(output_name + str(pydot_node_counts[output_name])),
                label=_escape_label(output_name),
            )
            pydot_nodes[output_name] = output_node
            graph.add_node(output_node)
            graph.add_edge(pydot.Edge(op_node, output_node))
    return graph


def GetPydotGraphMinimal(
    operators_or_net, name=None, rankdir="LR", minimal_dependency=False, node_producer=None
):
    """A pydot.Dot of ops only: an edge from each op to the ops reading its
    outputs; with minimal_dependency, edges implied by longer paths are
    left out."""
    _require_pydot()
    if node_producer is None:
        node_producer = GetOpNodeProducer(False, **OP_STYLE)
    operators, name = _rectify_operator_and_name(operators_or_net, name)
    graph = pydot.Dot(name, rankdir=rankdir)
    nodes, ancestors, producer = [], [], {}
    for op_id, op in enumerate(operators):
        op_node = node_producer(op, op_id)
        graph.add_node(op_node)
        nodes.append(op_node)
        parents = {producer[b] for b in op.input if b in producer}
        ancestry = set(parents)
        for p in parents:
            ancestry |= ancestors[p]
        if minimal_dependency:
            parents = {p for p in parents if not any(p in ancestors[q] for q in parents)}
        for p in sorted(parents):
            graph.add_edge(pydot.Edge(nodes[p], op_node))
        ancestors.append(ancestry)
        for b in op.output:
            producer[b] = op_id
    return graph


def GetOperatorMapForPlan(plan_def):
    """{'<net name>_<i>': ops} over the nets of a PlanDef."""
    operator_map = {}
    for net_id, net in enumerate(plan_def.network):
        if net.HasField("name"):
            operator_map[plan_def.name + "_" + net.name] = net.op
        else:
            operator_map[plan_def.name + "_network_%d" % net_id] = net.op
    return operator_map


def _draw_nets(nets, g):
    nodes = []
    for i, net in enumerate(nets):
        nodes.append(pydot.Node(_escape_label(net)))
        g.add_node(nodes[-1])
        if i > 0:
            g.add_edge(pydot.Edge(nodes[-2], nodes[-1]))
    return nodes


def _draw_steps(steps, g, skip_step_edges=False):  # noqa
    kMaxParallelSteps = 3

    def get_label():
        label = [step.name + "\n"]
        if step.report_net:
            label.append("Reporter: {}".format(step.report_net))
        if step.should_stop_blob:
            label.append("Stopper: {}".format(step.should_stop_blob))
        if step.concurrent_substeps:
            label.append("Concurrent")
        if step.only_once:
            label.append("Once")
        return "\n".join(label)

    def substep_edge(start, end):
        return pydot.Edge(start, end, arrowhead="dot", style="dashed")

    nodes = []
    for i, step in enumerate(steps):
        parallel = step.concurrent_substeps

        nodes.append(pydot.Node(_escape_label(get_label()), **OP_STYLE))
        g.add_node(nodes[-1])

        if i > 0 and not skip_step_edges:
            g.add_edge(pydot.Edge(nodes[-2], nodes[-1]))

        if step.network:
            sub_nodes = _draw_nets(step.network, g)
        elif step.substep:
            if parallel:
                sub_nodes = _draw_steps(step.substep[:kMaxParallelSteps], g, skip_step_edges=True)
            else:
                sub_nodes = _draw_steps(step.substep, g)
        else:
            raise ValueError("invalid step")

        if parallel:
            for sn in sub_nodes:
                g.add_edge(substep_edge(nodes[-1], sn))
            if len(step.substep) > kMaxParallelSteps:
                ellipsis = pydot.Node(
                    "{} more steps".format(len(step.substep) - kMaxParallelSteps), **OP_STYLE
                )
                g.add_node(ellipsis)
                g.add_edge(substep_edge(nodes[-1], ellipsis))
        else:
            g.add_edge(substep_edge(nodes[-1], sub_nodes[0]))

    return nodes


def GetPlanGraph(plan_def, name=None, rankdir="TB"):
    """A pydot.Dot of the execution steps of a PlanDef."""
    _require_pydot()
    graph = pydot.Dot(name, rankdir=rankdir)
    _draw_steps(plan_def.execution_step, graph)
    return graph


def GetGraphInJson(operators_or_net, output_filepath):
    """Writes {"nodes": [...], "edges": [...]} of the ops and blobs to
    `output_filepath` (no pydot needed)."""
    operators, _ = _rectify_operator_and_name(operators_or_net, None)
    blob_strid_to_node_id = {}
    node_name_counts = defaultdict(int)
    nodes = []
    edges = []
    for op_id, op in enumerate(operators):
        op_label = op.name + "/" + op.type if op.name else op.type
        op_node_id = len(nodes)
        nodes.append({"id": op_node_id, "label": op_label, "op_id": op_id, "type": "op"})
        for input_name in op.input:
            strid = _escape_label(input_name + str(node_name_counts[input_name]))
            if strid not in blob_strid_to_node_id:
                input_node = {"id": len(nodes), "label": input_name, "type": "blob"}
                blob_strid_to_node_id[strid] = len(nodes)
                nodes.append(input_node)
            else:
                input_node = nodes[blob_strid_to_node_id[strid]]
            edges.append({"source": blob_strid_to_node_id[strid], "target": op_node_id})
        for output_name in op.output:
            strid = _escape_label(output_name + str(node_name_counts[output_name]))
            if strid in blob_strid_to_node_id:
                # A blob written again is a new version: a new node.
                node_name_counts[output_name] += 1
                strid = _escape_label(output_name + str(node_name_counts[output_name]))

            if strid not in blob_strid_to_node_id:
                output_node = {"id": len(nodes), "label": output_name, "type": "blob"}
                blob_strid_to_node_id[strid] = len(nodes)
                nodes.append(output_node)
            edges.append({"source": op_node_id, "target": blob_strid_to_node_id[strid]})

    with open(output_filepath, "w") as f:
        json.dump({"nodes": nodes, "edges": edges}, f)


def _one_pixel_png():
    """A valid 1x1 transparent PNG, returned when drawing fails."""

    def chunk(kind, data):
        body = kind + data
        return (
            struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x00\x00\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


_DummyPngImage = _one_pixel_png()


def GetGraphPngSafe(func, *args, **kwargs):
    """The PNG bytes of `func(*args, **kwargs).create_png()`, or a 1x1
    dummy PNG when drawing fails (no pydot, no graphviz...)."""
    try:
        graph = func(*args, **kwargs)
        if pydot is None or not isinstance(graph, pydot.Dot):
            raise ValueError("func is expected to return pydot.Dot")
        return graph.create_png()
    except Exception as e:
        logger.error("Failed to draw graph: {}".format(e))
        return _DummyPngImage


def main():
    """CLI: writes `<prefix><graph>.dot` (and a PDF when graphviz is there)
    for every net of a NetDef or PlanDef file."""
    parser = argparse.ArgumentParser(description="Draws Caffe2 nets.")
    parser.add_argument(
        "--input", type=str, required=True, help="NetDef or PlanDef file (text or binary)"
    )
    parser.add_argument(
        "--output_prefix", type=str, default="", help="prefix of the output file names"
    )
    parser.add_argument("--minimal", action="store_true", help="draw ops only")
    parser.add_argument(
        "--minimal_dependency", action="store_true", help="with --minimal, leave out implied edges"
    )
    parser.add_argument(
        "--append_output", action="store_true", help="list each op's outputs in its node"
    )
    parser.add_argument(
        "--rankdir", type=str, default="LR", help="graphviz rank direction (LR, TB...)"
    )
    args = parser.parse_args()
    with open(args.input, "rb") as fid:
        content = fid.read()
    graphs = utils.GetContentFromProtoString(
        content,
        {
            caffe2_pb2.PlanDef: GetOperatorMapForPlan,
            caffe2_pb2.NetDef: lambda x: {x.name: x.op},
        },
    )
    producer = GetOpNodeProducer(args.append_output, **OP_STYLE)
    for key, operators in graphs.items():
        if args.minimal:
            graph = GetPydotGraphMinimal(
                operators,
                name=key,
                rankdir=args.rankdir,
                node_producer=producer,
                minimal_dependency=args.minimal_dependency,
            )
        else:
            graph = GetPydotGraph(operators, name=key, rankdir=args.rankdir, node_producer=producer)
        filename = args.output_prefix + graph.get_name() + ".dot"
        graph.write(filename, format="raw")
        try:
            graph.write_pdf(filename[:-3] + "pdf")
        except Exception as e:
            print(
                "Wrote {} but no PDF: graphviz (the `dot` program, Debian "
                "package graphviz) is needed to render it ({})".format(filename, e)
            )


if __name__ == "__main__":
    main()
