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
    """A topological order of `g` in which the source ops (those reading no op's output) that
    start the longest chains run first, so that the blobs they make die sooner; upstream's
    order. The sinks are joined under one root; every source follows its longest path to it
    (of equally long ones, through the successor first in `g`), and these paths make a tree
    whose leaves are the sources. Its leaves are listed depth-first, lower subtrees first
    (equal ones in the order the sources reach them), then the descendants of each source
    (networkx's order); the result is the lexicographical topological sort that runs the
    last of that list first: the source of the longest path, its chain, then the others.
    Where two independent chains are equally long, the later one runs first, as upstream."""
    nx = _networkx()
    nodes = list(g.nodes)
    if not nodes:
        return []
    position = {n: i for i, n in enumerate(nodes)}
    order = list(nx.topological_sort(g))
    sinks = [n for n in nodes if g.out_degree(n) == 0]
    root = sinks[0] if len(sinks) == 1 else object()  # a virtual root under several sinks
    # The next hop of every node on its longest path to the root, and that path's length.
    length, next_hop = {root: 0}, {root: None}
    for n in reversed(order):
        if n == root:
            continue
        successors = list(g.successors(n)) or [root]
        best = max(successors, key=lambda s: (length[s], -position.get(s, -1)))
        length[n], next_hop[n] = length[best] + 1, best
    sources = [n for n in nodes if g.in_degree(n) == 0]
    # The tree of the sources' longest paths; children in the order the paths reach them.
    children = collections.defaultdict(list)
    in_tree = {root}
    for source in sources:
        n = source
        while n not in in_tree:
            in_tree.add(n)
            children[next_hop[n]].append(n)
            n = next_hop[n]
    height = {}
    for n in order + ([] if root in position else [root]):
        if n in in_tree:
            height[n] = 1 + max((height[c] for c in children[n]), default=-1)
    # The leaves (sources) depth-first, lower subtrees first.
    sorted_sources, stack = [], [root]
    while stack:
        n = stack.pop()
        if not children[n]:
            sorted_sources.append(n)
            continue
        stack.extend(reversed(sorted(children[n], key=lambda c: height[c])))
    assert sorted(sorted_sources, key=position.get) == sources
    # Later in this list runs earlier: the last sources (tallest subtrees) first.
    dependency_order, seen = list(sorted_sources), set(sorted_sources)
    for source in sorted_sources:
        for d in nx.descendants(g, source):
            if d not in seen:
                seen.add(d)
                dependency_order.append(d)
    rank = {n: len(dependency_order) - i for i, n in enumerate(dependency_order)}
    result = list(nx.lexicographical_topological_sort(g, key=lambda n: rank[n]))
    assert len(result) == len(nodes)
    return result


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


compute_blob_assignments = compute_blob_assignment  # upstream's name


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


def _get_count(assignments):
    """The number of blobs in `assignments`."""
    return sum(len(a) for a in assignments) if assignments else 0


def compute_assignments_dp(ranges_sorted, init_assignment, counter=None):
    """The assignment of the blobs of `ranges_sorted` ((name, LiveRange) sorted by `used`), on
    top of `init_assignment` (lists of (name, LiveRange) holding none of them), that the
    dynamic program of upstream finds; it aims at the least memory (get_memory_usage).

    best[k], the best assignment of the first k + 1 blobs, extends best[j] for the last j whose
    every assignment the blob b_k can follow: the blobs after j up to b_k all overlap b_k, so
    the program tries b_k after each assignment of best[j] (and solves the blobs between again
    without that assignment, recursively) or alone after best[k - 1], and keeps the smallest.
    `counter` ([calls]) counts the recursive calls (logged every 5000)."""
    if not counter:
        counter = [0]
    counter[0] += 1
    if counter[0] % 5000 == 0 and ranges_sorted:
        log.info(
            "Finding assignments {} ({} -> {})...".format(
                counter[0], ranges_sorted[0][1].defined, ranges_sorted[-1][1].used
            )
        )
    init_assignment = init_assignment or []
    if not ranges_sorted:
        return copy.deepcopy(init_assignment)

    def fits_after_all(range_, assignments):
        return all(is_compatible(range_, a, []) for a in assignments)

    def best_with_last(ranges, start, previous_best):
        """The best assignment of `ranges` on top of `start` where ranges[-1] overlaps every
        other blob of `ranges`; previous_best is the best one of ranges[:-1]."""
        name, last = ranges[-1]
        candidates = []
        for i, assignment in enumerate(start):
            if not is_compatible(last, assignment, []):
                continue
            if len(ranges) == 1:  # extended where it is
                candidate = copy.deepcopy(start)
                candidate[i].append((name, last))
            else:  # the others solved again without it, then it
                others = [copy.deepcopy(a) for j, a in enumerate(start) if j != i]
                others = compute_assignments_dp(ranges[:-1], others, counter)
                candidate = others + [copy.deepcopy(assignment) + [(name, last)]]
            candidates.append(candidate)
        candidates.append(copy.deepcopy(previous_best) + [[(name, last)]])
        return min(candidates, key=get_memory_usage)  # the first of equal ones

    best = []
    for k, (_, range_) in enumerate(ranges_sorted):
        j = k - 1
        while j >= 0 and not fits_after_all(range_, best[j]):
            j -= 1
        start = best[j] if j >= 0 else init_assignment
        part = ranges_sorted[j + 1 : k + 1]
        current = best_with_last(part, start, best[-1] if best else init_assignment)
        assert _get_count(current) == _get_count(start) + len(part)
        best.append(current)
    return best[-1]


class AssignmentAlgorithm(enum.Enum):
    GREEDY = 0
    DYNAMIC_PROGRAMMING = 1


def get_updated_ranges(ranges, max_live=None):
    """(name, LiveRange) with the unknowns filled as upstream: defined -1 (made before the net),
    used max_live (read after it; by default one past the last use), size 1."""
    if max_live is None:
        max_live = max((r.used for _, r in ranges if r.used is not None), default=-1) + 1

    def filled(r):
        return LiveRange(
            defined=-1 if r.defined is None else r.defined,
            used=max_live if r.used is None else r.used,
            size=1 if r.size is None else r.size,
        )

    return [(name, filled(r)) for name, r in ranges]


def compute_assignments(ranges, static_blobs, algo):
    """Groups the blobs of `ranges` ({name: LiveRange}) into lists of blobs with disjoint live
    ranges, by AssignmentAlgorithm.GREEDY or DYNAMIC_PROGRAMMING (the least memory the dynamic
    program finds, at more cost). A blob never read lives to the end (it may be read after the
    net); static_blobs are each alone."""
    if algo not in (AssignmentAlgorithm.GREEDY, AssignmentAlgorithm.DYNAMIC_PROGRAMMING):
        raise ValueError("compute_assignments: unknown algorithm {!r}".format(algo))
    ranges = sorted(ranges.items(), key=lambda p: (p[1].used is None, p[1].used or 0))
    ranges = get_updated_ranges(ranges)
    sharable = [p for p in ranges if p[0] not in static_blobs]
    static = [p for p in ranges if p[0] in static_blobs]
    log.info("Total sharable blobs {}".format(len(sharable)))
    if algo == AssignmentAlgorithm.DYNAMIC_PROGRAMMING:
        assignments = compute_assignments_dp(sharable, [])
    else:
        assignments = compute_assignments_greedy(sharable, None)
    return assignments + [[p] for p in static]


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
