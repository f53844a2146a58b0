"""net_drawer: JSON graphs without pydot; pydot graphs when installed."""
import importlib.util
import json

import pytest

from caffe2.python import core, net_drawer

HAS_PYDOT = importlib.util.find_spec("pydot") is not None


def small_net():
    net = core.Net("draw")
    net.Copy("x", "y")
    net.Sum(["y", "x"], "y")  # writes y again: a new version
    net.Copy("y", "z")
    return net


def test_graph_in_json(tmp_path):
    path = str(tmp_path / "g.json")
    net_drawer.GetGraphInJson(small_net(), path)
    graph = json.load(open(path))
    ops = [n for n in graph["nodes"] if n["type"] == "op"]
    blobs = [n["label"] for n in graph["nodes"] if n["type"] == "blob"]
    assert [o["label"] for o in ops] == ["Copy", "Sum", "Copy"]
    assert sorted(blobs) == ["x", "y", "y", "z"]  # two versions of y
    assert len(graph["edges"]) == 7
    # Also from a NetDef and a list of ops.
    net_drawer.GetGraphInJson(small_net().Proto(), path)
    net_drawer.GetGraphInJson(list(small_net().Proto().op), path)


def test_png_safe_returns_dummy_png_on_failure():
    def fail():
        raise RuntimeError("no graph")

    png = net_drawer.GetGraphPngSafe(fail)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and b"IEND" in png


def test_operator_map_for_plan():
    plan = core.Plan("p")
    plan.AddStep(core.execution_step("s", [small_net()]))
    names = list(net_drawer.GetOperatorMapForPlan(plan.Proto()))
    assert len(names) == 1 and names[0].startswith("p_draw")


@pytest.mark.skipif(HAS_PYDOT, reason="pydot is installed")
def test_pydot_missing_is_a_clear_error():
    with pytest.raises(ImportError, match="python3-pydot"):
        net_drawer.GetPydotGraph(small_net())


@pytest.mark.skipif(not HAS_PYDOT, reason="needs pydot (python3-pydot)")
def test_pydot_graphs():
    graph = net_drawer.GetPydotGraph(small_net(), rankdir="TB")
    names = [n.get_name() for n in graph.get_nodes()]
    assert any("Copy (op#0)" in n for n in names)
    minimal = net_drawer.GetPydotGraphMinimal(small_net(), minimal_dependency=True)
    assert len(minimal.get_edges()) == 2
    full = net_drawer.GetPydotGraphMinimal(small_net())
    assert len(full.get_edges()) == 2
    png = net_drawer.GetGraphPngSafe(net_drawer.GetPydotGraph, small_net())
    assert png.startswith(b"\x89PNG")
