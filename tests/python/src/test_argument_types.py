"""Arguments are typed strictly: a list argument given a value of another kind (a string, a scalar,
a list of strings) is an error naming the argument and what it held; an empty list is fine
(tests/cpp/core/test_argument.cc checks every kind of list)."""
from caffe2.python import workspace
from reliability_util import assert_clear_error, run_op, fresh_workspace_fixture


fresh_workspace = fresh_workspace_fixture("argument_types_test")


def test_a_string_for_a_shape():
    assert_clear_error(
        lambda: run_op("ConstantFill", [], ["y"], shape="abc", value=1.0),
        "[ConstantFill]",
        "'shape'",
        "ints",
        "'abc'",
    )


def test_a_scalar_for_a_shape():
    assert_clear_error(
        lambda: run_op("ConstantFill", [], ["y"], shape=3, value=1.0), "'shape'", "single value"
    )


def test_an_empty_list_is_a_scalar_shape():
    run_op("ConstantFill", [], ["y"], shape=[], value=2.0)
    assert workspace.FetchBlob("y").shape == ()
