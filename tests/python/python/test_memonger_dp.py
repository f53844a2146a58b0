"""memonger's pure-Python pass (memonger_interference): compute_assignments_dp, upstream's dynamic
program, against greedy and a brute-force optimum; compute_assignments choosing between them; nets
optimized by optimize_interference computing what the original computes; and
topological_sort_traversal_longest_path ordering ops as upstream does."""
import importlib.util

import numpy as np
import pytest

from caffe2.python import brew, memonger, model_helper, workspace

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("networkx") is None, reason="needs networkx (python3-networkx)"
)

LR = memonger.LiveRange
DP = memonger.AssignmentAlgorithm.DYNAMIC_PROGRAMMING
GREEDY = memonger.AssignmentAlgorithm.GREEDY


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def random_ranges(seed, n):
    """n blobs with random lifetimes (0 to 5 steps) and sizes, sorted by last use."""
    rng = np.random.RandomState(seed)
    ranges = []
    for i in range(n):
        defined = int(rng.randint(0, 3 * n))
        used = defined + int(rng.randint(0, 6))
        ranges.append(("b%d" % i, LR(defined, used, int(rng.randint(1, 20)))))
    return sorted(ranges, key=lambda p: p[1].used)


def optimum(ranges):
    """The least memory of any grouping of the blobs into lists of disjoint lifetimes."""
    best = [float("inf")]

    def place(i, groups):
        if i == len(ranges):
            best[0] = min(best[0], memonger.get_memory_usage(groups))
            return
        r = ranges[i][1]
        for group in groups:
            if all(r.defined > x.used or x.defined > r.used for _, x in group):
                group.append(ranges[i])
                place(i + 1, groups)
                group.pop()
        groups.append([ranges[i]])
        place(i + 1, groups)
        groups.pop()

    place(0, [])
    return best[0]


def names(assignments):
    return [[name for name, _ in a] for a in assignments]


def check_valid(assignments, ranges):
    memonger.verify_assignments(assignments)  # each list in order, lifetimes disjoint
    assert sorted(n for a in assignments for n, _ in a) == sorted(n for n, _ in ranges)


def test_known_cases_get_the_optimal_assignment():
    # upstream's cases: greedy finds the optimum of the first, not of the second
    ranges = [("b1", LR(1, 3, 10)), ("b2", LR(3, 4, 1)), ("b3", LR(5, 6, 1)), ("b4", LR(5, 7, 10))]
    best = memonger.compute_assignments_dp(ranges, None)
    assert memonger.get_memory_usage(best) == 11 == optimum(ranges)
    assert names(best) == [["b2", "b3"], ["b1", "b4"]]
    greedy = memonger.compute_assignments_greedy(ranges, None)
    assert names(greedy) == [["b1", "b4"], ["b2", "b3"]]

    ranges = [("b1", LR(1, 2, 10)), ("b2", LR(4, 6, 1)), ("b3", LR(5, 6, 10))]
    best = memonger.compute_assignments_dp(ranges, [])
    assert names(best) == [["b2"], ["b1", "b3"]]
    assert memonger.get_memory_usage(best) == 11 == optimum(ranges)
    assert memonger.get_memory_usage(memonger.compute_assignments_greedy(ranges, None)) == 20


def test_dp_never_uses_more_memory_than_greedy_on_random_ranges():
    better = optimal = 0
    for n in (4, 6, 8):
        for seed in range(30):
            ranges = random_ranges(seed, n)
            dp = memonger.compute_assignments_dp(ranges, [])
            greedy = memonger.compute_assignments_greedy(ranges, None)
            check_valid(dp, ranges)
            dp_bytes, greedy_bytes = map(memonger.get_memory_usage, (dp, greedy))
            assert optimum(ranges) <= dp_bytes <= greedy_bytes, (n, seed)
            better += dp_bytes < greedy_bytes
            optimal += dp_bytes == optimum(ranges)
    assert better >= 30 and optimal >= 85, (better, optimal)  # of 90 sets


def test_dp_is_upstreams_heuristic_not_an_exhaustive_search():
    """The program commits to the best assignment of each prefix, so it can miss the optimum and
    even lose to greedy (about 1 set in 50 of random_ranges): here it joins a and c because that
    is best for the first three blobs; the optimum puts c after b and d after a."""
    ranges = [
        ("a", LR(0, 1, 13)),
        ("b", LR(1, 3, 3)),
        ("c", LR(5, 7, 7)),
        ("d", LR(7, 9, 11)),
        ("e", LR(9, 14, 10)),
    ]
    dp = memonger.compute_assignments_dp(ranges, [])
    check_valid(dp, ranges)
    assert names(dp) == [["b", "d"], ["a", "c", "e"]] and memonger.get_memory_usage(dp) == 24
    greedy = memonger.compute_assignments_greedy(ranges, None)
    assert names(greedy) == [["a", "d"], ["b", "c", "e"]]
    assert memonger.get_memory_usage(greedy) == 23 == optimum(ranges)


def test_dp_extends_an_initial_assignment_and_counts_its_calls():
    init = [[("x", LR(0, 1, 5))], [("y", LR(0, 2, 4))]]
    ranges = [("a", LR(2, 3, 5)), ("b", LR(4, 8, 2))]
    counter = [0]
    best = memonger.compute_assignments_dp(ranges, init, counter)
    assert names(best) == [["x", "a", "b"], ["y"]]
    assert init == [[("x", LR(0, 1, 5))], [("y", LR(0, 2, 4))]]  # not modified
    assert counter[0] >= 1
    assert memonger.compute_assignments_dp([], init) == init


def test_compute_assignments_uses_the_chosen_algorithm():
    ranges = {"b1": LR(1, 2, 10), "b2": LR(4, 6, 1), "b3": LR(5, 6, 10)}
    assert memonger.get_memory_usage(memonger.compute_assignments(ranges, [], DP)) == 11
    assert memonger.get_memory_usage(memonger.compute_assignments(ranges, [], GREEDY)) == 20
    with pytest.raises(ValueError, match="unknown algorithm"):
        memonger.compute_assignments(ranges, [], "dp")


@pytest.mark.parametrize("algo", [GREEDY, DP])
def test_compute_assignments_fills_unknowns_and_keeps_static_blobs_alone(algo):
    ranges = {
        "out": LR(1, None, None),  # never read here: may be read after the net, lives to the end
        "in": LR(None, 0, None),  # made before the net
        "t1": LR(0, 1, None),
        "t2": LR(2, 3, None),
        "late": LR(4, 5, None),
        "w": LR(None, 4, None),
    }
    assignments = memonger.compute_assignments(ranges, {"w", "in"}, algo)
    memonger.verify_assignments(assignments)
    assert names(assignments[-2:]) == [["in"], ["w"]]  # static: alone, last, by last use
    by_name = {n: r for a in assignments for n, r in a}
    assert by_name["out"] == LR(1, 6, 1) and by_name["in"] == LR(-1, 0, 1)
    group_of = {n: i for i, a in enumerate(assignments) for n, _ in a}
    assert all(group_of[n] != group_of["out"] for n in ("t2", "late"))
    assert group_of["t1"] == group_of["t2"] == group_of["late"]
    assert len(assignments) == 4


def simple_model():
    """upstream's test_simple_memonger model: fc x3, in-place Relu, Softmax, LabelCrossEntropy,
    AveragedLoss, gradients."""
    model = model_helper.ModelHelper(name="dp_net")
    fc1 = brew.fc(model, "data", "fc1", dim_in=3, dim_out=4)
    fc2 = brew.fc(model, fc1, "fc2", dim_in=4, dim_out=4)
    fc3 = brew.fc(model, fc2, "fc3", dim_in=4, dim_out=4)
    fc3.Relu([], fc3).Softmax([], "pred").LabelCrossEntropy(["label"], ["xent"]).AveragedLoss(
        [], "loss"
    )
    grads = model.AddGradientOperators(["loss"])
    return model, grads


def initial_values(model):
    """The parameters (drawn once) and the inputs."""
    workspace.ResetWorkspace()
    workspace.RunNetOnce(model.param_init_net)
    values = {
        b: workspace.FetchBlob(b) for op in model.param_init_net.Proto().op for b in op.output
    }
    rng = np.random.RandomState(0)
    values["data"] = rng.randn(5, 3).astype(np.float32)
    values["label"] = np.array([0, 1, 2, 3, 1], np.int32)
    return values


def run_fresh(values, netdef, fetch):
    """Runs `netdef` in an empty workspace on `values`; returns the blobs named in `fetch`."""
    workspace.ResetWorkspace()
    for name, value in values.items():
        workspace.FeedBlob(name, value)
    workspace.RunNetOnce(netdef)
    return [workspace.FetchBlob(name) for name in fetch]


@pytest.mark.parametrize(
    "algo, ordering",
    [
        (GREEDY, memonger.topological_sort_traversal),
        (GREEDY, memonger.topological_sort_traversal_longest_path),
        (DP, memonger.topological_sort_traversal_longest_path),
    ],
)
def test_optimized_net_computes_the_same(algo, ordering):
    model, grads = simple_model()
    fetch = ["loss", str(grads["fc1_w"]), str(grads["fc2_w"])]
    static = [o for op in model.param_init_net.Proto().op for o in op.output]
    static += ["data", "label"] + fetch
    values = initial_values(model)
    expected = run_fresh(values, model.net.Proto(), fetch)
    sizes = memonger.collect_blob_sizes(model.net.Proto())
    result = memonger.optimize_interference(
        model.net.Proto(), static, ordering_function=ordering, blob_sizes=sizes, algo=algo
    )
    memonger.verify_assignments(result.assignments)
    assert result.blob_assignments and not set(result.blob_assignments) & set(static)
    assert sorted(op.SerializeToString() for op in result.net.op) != sorted(
        op.SerializeToString() for op in model.net.Proto().op
    )  # renamed
    for name, want, got in zip(fetch, expected, run_fresh(values, result.net, fetch)):
        np.testing.assert_array_equal(got, want, err_msg=name)
    run_fresh(values, model.net.Proto(), [])  # sizes of the original blobs
    stats = memonger.compute_statistics(result.assignments)
    assert stats.optimized_nbytes < stats.baseline_nbytes


def conv_chain_model(with_second_target):
    """upstream's graphs: 0 Copy -> 1 conv -> 3 conv <- 2 Copy (and 4 Copy -> 5 Copy)."""
    model = model_helper.ModelHelper(name="lp")
    model.Copy("conv0_w_comp", "conv0_w")  # 0
    conv0 = brew.conv(model, "data", "conv0", 32, 32, 4)  # 1
    model.Copy("conv2_w", "conv2_w")  # 2
    brew.conv(model, conv0, "conv2", 16, 32, 4)  # 3
    if with_second_target:
        model.Copy("data1", "data2")  # 4
        model.Copy("data2", "data3")  # 5
    return memonger.compute_interference_graph(model.net.Proto().op)


def test_longest_path_order_of_upstreams_cases():
    g = conv_chain_model(False)
    assert memonger.topological_sort_traversal(g) == [0, 2, 1, 3]
    assert memonger.topological_sort_traversal_longest_path(g) == [0, 1, 2, 3]
    g = conv_chain_model(True)
    assert memonger.topological_sort_traversal_longest_path(g) == [0, 1, 2, 3, 4, 5]
    model = model_helper.ModelHelper(name="one")
    model.Copy("a", "b")
    g = memonger.compute_interference_graph(model.net.Proto().op)
    assert memonger.topological_sort_traversal_longest_path(g) == [0]
    assert (
        memonger.topological_sort_traversal_longest_path(memonger.compute_interference_graph([]))
        == []
    )


def graph(n, edges):
    nx = memonger._networkx()
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


def test_longest_path_order_ties_and_branches():
    # Two independent chains of the same length: the later one runs first, as upstream.
    assert memonger.topological_sort_traversal_longest_path(graph(4, [(0, 1), (2, 3)])) == [
        2,
        3,
        0,
        1,
    ]
    # The longer chain first, even when it starts later in the net.
    order = memonger.topological_sort_traversal_longest_path(
        graph(6, [(0, 1), (2, 3), (3, 4), (4, 5)])
    )
    assert order == [2, 3, 4, 5, 0, 1]
    # A join: the source of the longer branch, its chain, then the other source.
    order = memonger.topological_sort_traversal_longest_path(
        graph(6, [(0, 5), (1, 2), (2, 3), (3, 5), (4, 5)])
    )
    assert order == [1, 2, 3, 4, 0, 5]  # of the equal sources 0 and 4, the later first


def test_longest_path_order_is_topological_and_starts_with_the_longest_chain():
    nx = memonger._networkx()
    for seed in range(40):
        rng = np.random.RandomState(seed)
        n = int(rng.randint(2, 16))
        edges = [(i, j) for j in range(n) for i in range(j) if rng.rand() < 0.15]
        g = graph(n, edges)
        order = memonger.topological_sort_traversal_longest_path(g)
        assert sorted(order) == list(range(n)), seed
        position = {node: k for k, node in enumerate(order)}
        assert all(position[i] < position[j] for i, j in edges), seed
        longest = {
            node: nx.dag_longest_path_length(g.subgraph(nx.descendants(g, node) | {node}))
            for node in g
        }
        assert g.in_degree(order[0]) == 0
        assert longest[order[0]] == max(longest.values()), seed
