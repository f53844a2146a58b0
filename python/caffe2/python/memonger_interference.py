"""The pure-Python memonger pass: optimize_interference reorders the ops of
a net along its dependency graph (networkx, imported when called), computes
the live range of every blob in that order and greedily lets blobs with
disjoint ranges share a name; plus its building blocks (LiveRange,
compute_ranges, the assignment helpers, compute_interference_graph,
apply_assignments, the topological orderings). Re-exported by
caffe2.python.memonger under the upstream names.
"""
import collections
import copy
import enum
import logging

log = logging.getLogger("memonger")
LiveRange = collections.namedtuple("LiveRange", ["defined", "used", "size"])


def _networkx():
    try:
        import networkx
    except ImportError:
        raise ImportError(
            "memonger.optimize_interference needs networkx (Debian package "
            "python3-networkx); the C++ passes (share_grad_blobs, "
            "optimize_inference_fast) do not"
        )
    return networkx


def topological_sort_traversal(g):
    """Ops in a topological order of the interference graph `g`."""
    return list(_networkx().topological_sort(g))


def topological_sort_traversal_longest_path(g):
    """A topological order that starts with the source ops farthest from
    the end of the graph, so that blobs they make die sooner."""
    nx = _networkx()
    depth = {}
    for node in reversed(list(nx.topological_sort(g))):
        succ = list(g.successors(node))
        depth[node] = 1 + max((depth[s] for s in succ), default=0)
    return list(nx.lexicographical_topological_sort(g, key=lambda n: (-depth[n], n)))


def compute_ranges(linearized_ops, blob_sizes=None):
    """{blob: LiveRange(defined=first writer index, used=last reader
    index, size)} over `linearized_ops`."""
    if not blob_sizes:
        log.warning("Provide blob sizes to get more accurate assignments.")
    blobs = collections.defaultdict(lambda: LiveRange(defined=None, used=None, size=None))
    for i, op in enumerate(linearized_ops):
        for blob in op.input:
            r = blobs[blob]
            size = blob_sizes[blob] if blob_sizes else None
            blobs[blob] = r._replace(used=i if r.used is None else max(r.used, i), size=size)
        for blob in op.output:
            r = blobs[blob]
            size = blob_sizes[blob] if blob_sizes else None
            blobs[blob] = r._replace(
                defined=i if r.defined is None else min(r.defined, i), size=size
            )
    return blobs


def is_compatible(candidate_range, assignment, static_blobs):
    """Whether a blob living in `candidate_range` can follow the last blob
    of `assignment` (a list of (name, LiveRange))."""
    name, range_ = assignment[-1]
    if name in static_blobs:
        return False
    if candidate_range.defined is None or range_.defined is None or range_.used is None:
        return False
    return candidate_range.defined > range_.used


def compute_blob_assignment(assignments):
    """{blob: canonical blob} for assignments of two blobs or more (the
    canonical one is the last)."""
    blob_assignments = {}
    for assignment in assignments:
        if len(assignment) > 1:
            last_blob = assignment[-1][0]
            for blob, _ in assignment:
                blob_assignments[blob] = last_blob
    return blob_assignments


def _get_max_size(assignment):
    sizes = [r.size for _, r in assignment if r.size is not None]
    return max(sizes) if sizes else 0


def get_memory_usage(assignments):
    return sum(_get_max_size(a) for a in assignments)


def compute_assignments_greedy(ranges_sorted, init_assignments=None):
    """Puts each (name, range) after the compatible assignment whose size
    is closest, or in a new one."""
    assignments = init_assignments or []
    visited = {name for a in assignments for name, _ in a}
    for name, range_ in ranges_sorted:
        if name in visited:
            continue
        size = range_.size or 0
        candidates = [a for a in assignments if is_compatible(range_, a, [])]
        if candidates:
            best = min(candidates, key=lambda a: abs(_get_max_size(a) - size))
            best.append((name, range_))
        else:
            assignments.append([(name, range_)])
    return assignments


class AssignmentAlgorithm(enum.Enum):
    GREEDY = 0
    DYNAMIC_PROGRAMMING = 1


def compute_assignments(ranges, static_blobs, algo):
    """Groups the blobs of `ranges` (all but static_blobs) into lists of
    blobs with disjoint live ranges. Both algorithms use the greedy
    assignment here."""
    items = []
    for name, r in ranges.items():
        if name in static_blobs:
            continue
        # A blob never read lives until its definition only.
        used = r.used if r.used is not None else r.defined
        items.append((name, LiveRange(defined=r.defined, used=used, size=r.size)))
    items.sort(key=lambda p: (-1 if p[1].defined is None else p[1].defined, p[0]))
    return compute_assignments_greedy(items)


def verify_assignments(assignments):
    for a in assignments:
        for x, y in zip(a[:-1], a[1:]):
            assert x[1].used < y[1].defined


def compute_interference_graph(ops):
    """A DAG with an edge i -> j when op j reads an output of op i."""
    nx = _networkx()
    g = nx.DiGraph()
    producers = collections.defaultdict(list)
    for j, op in enumerate(ops):
        g.add_node(j, op=op)
        for blob in op.input:
            for i in producers.get(blob, []):
                g.add_edge(i, j)
        for blob in op.output:
            producers[blob].append(j)
    return g


Optimization = collections.namedtuple("Optimization", ["net", "assignments", "blob_assignments"])


def apply_assignments(net, blob_assignments):
    """Renames the blobs of `net` in place ({blob: canonical blob})."""

    def rename(names):
        for i, name in enumerate(names):
            names[i] = blob_assignments.get(name, name)

    for op in net.op:
        if op.type.startswith("RecurrentNetwork"):
            for arg in op.arg:
                if arg.name.endswith("step_net"):
                    apply_assignments(arg.n, blob_assignments)
                    rename(arg.n.external_input)
        rename(op.input)
        rename(op.output)


def optimize_interference(
    net,
    static_blobs,
    ordering_function=topological_sort_traversal,
    blob_sizes=None,
    algo=AssignmentAlgorithm.GREEDY,
):
    """Reorders the ops of a copy of `net` (a NetDef) by
    `ordering_function`, then shares blobs with disjoint live ranges in
    that order (all but static_blobs). Returns Optimization(net,
    assignments, blob_assignments)."""
    net = copy.deepcopy(net)
    g = compute_interference_graph(net.op)
    linearized_ops = [net.op[i] for i in ordering_function(g)]
    # The net must run in the order the ranges were computed for.
    del net.op[:]
    net.op.extend(linearized_ops)
    ranges = compute_ranges(linearized_ops, blob_sizes)
    assignments = compute_assignments(ranges, static_blobs, algo)
    blob_assignments = compute_blob_assignment(assignments)
    apply_assignments(net, blob_assignments)
    return Optimization(net=net, blob_assignments=blob_assignments, assignments=assignments)
