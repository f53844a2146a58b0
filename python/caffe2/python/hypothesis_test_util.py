"""Hypothesis strategies and HypothesisTestCase: reference, gradient and
device checks of operators.

A typical op test:

    @given(X=hu.tensor(), **hu.gcs)
    def test_relu(self, X, gc, dc):
        op = core.CreateOperator("Relu", ["X"], ["Y"])
        self.assertReferenceChecks(gc, op, [X], lambda X: [np.maximum(X, 0)])
        self.assertGradientChecks(gc, op, [X], 0, [0])
        self.assertDeviceChecks(dc, op, [X], [0])

The strategies (hu.tensor, hu.lengths, ...) live in hypothesis_test_strategies and are
re-exported here; the profiles, device options and HypothesisTestCase are this module's.
"""
import contextlib
import copy
import logging
import os

import hypothesis
import hypothesis.strategies as st
import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, device_checker, gradient_checker, test_util, workspace

# The strategies, re-exported under the upstream names.
from caffe2.python.hypothesis_test_strategies import (  # noqa: F401
    arrays,
    dims,
    elements_of_type,
    floats,
    lengths,
    lengths_tensor,
    segment_ids,
    segmented_tensor,
    sparse_lengths_tensor,
    sparse_segmented_tensor,
    tensor,
    tensor1d,
    tensors,
    tensors1d,
)

hypothesis.settings.register_profile(
    "sandcastle",
    derandomize=True,
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
    database=None,
    max_examples=100,
    deadline=None,
)
hypothesis.settings.register_profile(
    "dev",
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
    database=None,
    max_examples=10,
    deadline=None,
)
# CI: the dev profile's examples, drawn the same way on every run (no flaky random draws).
hypothesis.settings.register_profile(
    "ci",
    derandomize=True,
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
    database=None,
    max_examples=10,
    deadline=None,
)
hypothesis.settings.register_profile(
    "debug",
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
    database=None,
    max_examples=1000,
    deadline=None,
    verbosity=hypothesis.Verbosity.verbose,
)
hypothesis.settings.load_profile(os.getenv("CAFFE2_HYPOTHESIS_PROFILE", "dev"))


cpu_do = caffe2_pb2.DeviceOption()
gpu_do = caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA)
device_options = [cpu_do] + ([gpu_do] if workspace.has_gpu_support else [])
# One option per visible GPU.
expanded_device_options = [cpu_do] + (
    [
        caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA, cuda_gpu_id=i)
        for i in range(workspace.NumCudaDevices())
    ]
    if workspace.has_gpu_support
    else []
)


def device_checker_device_options():
    return st.just(device_options)


def gradient_checker_device_option():
    return st.sampled_from(device_options)


# Keyword strategies for @given: gc = the device a test runs on, dc = the
# devices compared by assertDeviceChecks.
gcs = dict(gc=gradient_checker_device_option(), dc=device_checker_device_options())
gcs_cpu_only = dict(gc=st.sampled_from([cpu_do]), dc=st.just([cpu_do]))
gcs_gpu_only = dict(gc=st.sampled_from([gpu_do]), dc=st.just([gpu_do]))


@contextlib.contextmanager
def temp_workspace(name=b"temp_ws"):
    """Runs the body in a fresh workspace `name`, reset afterwards."""
    old_ws_name = workspace.CurrentWorkspace()
    workspace.SwitchWorkspace(name, True)
    try:
        yield
    finally:
        workspace.ResetWorkspace()
        workspace.SwitchWorkspace(old_ws_name)


def _with_device(op, device_option):
    op = copy.deepcopy(op)
    op.device_option.CopyFrom(device_option)
    return op


def _feed_inputs(op, inputs, device_option, input_device_options):
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, device_option=input_device_options.get(name, device_option))


def runOpBenchmark(device_option, op, inputs, input_device_options=None, iterations=10):
    """Benchmarks `op` alone; returns BenchmarkNet's timings (ms)."""
    input_device_options = input_device_options or {}
    op = _with_device(op, device_option)
    net = caffe2_pb2.NetDef()
    net.op.extend([op])
    net.name = op.name if op.name else "test"
    with temp_workspace():
        _feed_inputs(op, inputs, device_option, input_device_options)
        workspace.CreateNet(net)
        return workspace.BenchmarkNet(net.name, 1, iterations, True)


def _tensor_type_of(value):
    """TensorProto.DataType of a fetched numpy array, or None."""
    if not isinstance(value, np.ndarray):
        return None
    return {
        np.dtype(np.float32): caffe2_pb2.TensorProto.FLOAT,
        np.dtype(np.float64): caffe2_pb2.TensorProto.DOUBLE,
        np.dtype(np.float16): caffe2_pb2.TensorProto.FLOAT16,
        np.dtype(np.int32): caffe2_pb2.TensorProto.INT32,
        np.dtype(np.int64): caffe2_pb2.TensorProto.INT64,
        np.dtype(np.int16): caffe2_pb2.TensorProto.INT16,
        np.dtype(np.int8): caffe2_pb2.TensorProto.INT8,
        np.dtype(np.uint16): caffe2_pb2.TensorProto.UINT16,
        np.dtype(np.uint8): caffe2_pb2.TensorProto.UINT8,
        np.dtype(np.bool_): caffe2_pb2.TensorProto.BOOL,
        np.dtype(object): caffe2_pb2.TensorProto.STRING,
    }.get(value.dtype)


def _shape_inference_is_strict():
    # CAFFE2_ASSERT_SHAPEINFERENCE=0 turns mismatches into warnings.
    return os.getenv("CAFFE2_ASSERT_SHAPEINFERENCE", "1") != "0"


class HypothesisTestCase(test_util.TestCase):
    """TestCase with the op checks used with hypothesis strategies."""

    def assertDeviceChecks(
        self,
        device_options,
        op,
        inputs,
        outputs_to_check,
        input_device_options=None,
        threshold=0.01,
    ):
        """Asserts that `op` gives the same outputs on all devices."""
        checker = device_checker.DeviceChecker(threshold, device_options=device_options)
        self.assertTrue(checker.CheckSimple(op, inputs, outputs_to_check, input_device_options))

    def assertGradientChecks(
        self,
        device_option,
        op,
        inputs,
        outputs_to_check,
        outputs_with_grads,
        grad_ops=None,
        threshold=0.005,
        stepsize=0.05,
        input_device_options=None,
    ):
        """Asserts that the gradient of input `outputs_to_check` (an input
        index) matches finite differences of ½ Σ y² over the outputs
        `outputs_with_grads`."""
        checker = gradient_checker.GradientChecker(
            stepsize=stepsize,
            threshold=threshold,
            device_option=device_option,
            workspace_name="gradient_check_{}_{}".format(
                device_option.device_type, device_option.cuda_gpu_id
            ),
        )
        ok, grad, grad_estimated = checker.CheckSimple(
            op,
            inputs,
            outputs_to_check,
            outputs_with_grads,
            grad_ops=grad_ops,
            input_device_options=input_device_options,
        )
        self.assertEqual(grad.shape, grad_estimated.shape)
        self.assertTrue(ok, "Gradient check failed for input " + str(op.input[outputs_to_check]))

    def _assertGradReferenceChecks(
        self, op, inputs, ref_outputs, output_to_grad, grad_reference, threshold=1e-4
    ):
        grad_blob_name = output_to_grad + "_grad"
        grad_ops, grad_map = core.GradientRegistry.GetBackwardPass(
            [op], {output_to_grad: grad_blob_name}
        )
        output_grad = workspace.FetchBlob(output_to_grad)
        grad_ref_outputs = grad_reference(output_grad, ref_outputs, inputs)
        workspace.FeedBlob(grad_blob_name, output_grad)
        workspace.RunOperatorsOnce(grad_ops)

        self.assertEqual(len(grad_ref_outputs), len(inputs))
        for name, ref in zip(op.input, grad_ref_outputs):
            grad_names = grad_map.get(name)
            if not grad_names:
                self.assertIsNone(ref)
                continue
            if isinstance(grad_names, core.BlobReference):
                ref_vals, ref_indices, val_name = ref, None, grad_names
            else:
                ref_vals, ref_indices = ref
                val_name = grad_names.values
            vals = workspace.FetchBlob(str(val_name))
            np.testing.assert_allclose(
                vals,
                ref_vals,
                atol=threshold,
                rtol=threshold,
                err_msg="Gradient {0} (x) is not matching the reference (y)".format(val_name),
            )
            if ref_indices is not None:
                indices = workspace.FetchBlob(str(grad_names.indices))
                np.testing.assert_allclose(indices, ref_indices, atol=1e-4, rtol=1e-4)

    def _assertInferTensorChecks(self, name, shapes, types, output):
        """Compares inferred shape and type of blob `name` with `output`."""
        if name not in shapes:
            return
        messages = []
        if list(shapes[name]) != list(np.shape(output)):
            messages.append(
                "Shape {} mismatch: inferred {} vs. actual {}".format(
                    name, shapes[name], np.shape(output)
                )
            )
        actual_type = _tensor_type_of(output)
        if actual_type is not None and types[name] != actual_type:
            messages.append(
                "Type {} mismatch: inferred {} vs. actual {}".format(name, types[name], actual_type)
            )
        if not messages:
            return
        if _shape_inference_is_strict():
            self.fail("\n".join(messages))
        logging.warning("\n".join(messages))

    def assertReferenceChecks(
        self,
        device_option,
        op,
        inputs,
        reference,
        input_device_options=None,
        threshold=1e-4,
        output_to_grad=None,
        grad_reference=None,
        atol=None,
        outputs_to_check=None,
    ):
        """Runs `op` and compares its outputs with `reference(*inputs)`
        (a list/tuple of arrays), within `threshold` (relative) and `atol`
        (absolute, default threshold). Also compares the shapes and types
        inferred by the op's schema with the actual outputs, and, with
        `grad_reference`, the gradient of output `output_to_grad`.

            def softsign(X):
                return (X / (1 + np.abs(X)),)
            self.assertReferenceChecks(gc, op, [X], softsign)
        """
        input_device_options = input_device_options or {}
        op = _with_device(op, device_option)
        with temp_workspace():
            if len(op.input) > len(inputs):
                raise ValueError(
                    "must supply an input for each input on the op: "
                    "%s vs %s" % (op.input, inputs)
                )
            _feed_inputs(op, inputs, device_option, input_device_options)
            net = core.Net("opnet")
            net.Proto().op.extend([op])
            shapes = types = None
            try:
                shapes, types = workspace.InferShapesAndTypes([net])
            except RuntimeError as e:
                if os.getenv("CAFFE2_ASSERT_SHAPEINFERENCE") == "1":
                    raise
                logging.warning(str(e))
            workspace.RunNetOnce(net)
            reference_outputs = reference(*inputs)
            if not isinstance(reference_outputs, (tuple, list)):
                raise RuntimeError(
                    "You are providing a wrong reference implementation. A "
                    "proper one should return a tuple/list of numpy arrays."
                )
            if not outputs_to_check:
                self.assertEqual(len(reference_outputs), len(op.output))
                outputs_to_check = list(range(len(op.output)))
            if atol is None:
                atol = threshold
            outs = []
            for output_index, ref in zip(outputs_to_check, reference_outputs):
                output_blob_name = op.output[output_index]
                output = workspace.FetchBlob(output_blob_name)
                if not isinstance(output, np.ndarray) or output.dtype.kind in "SO":
                    np.testing.assert_array_equal(output, ref)
                else:
                    np.testing.assert_allclose(
                        output,
                        ref,
                        atol=atol,
                        rtol=threshold,
                        err_msg="Output {0} is not matching the reference".format(output_blob_name),
                    )
                if shapes is not None:
                    self._assertInferTensorChecks(output_blob_name, shapes, types, output)
                outs.append(output)
            if grad_reference is not None:
                assert (
                    output_to_grad is not None
                ), "If grad_reference is set, output_to_grad has to be set"
                with core.DeviceScope(device_option):
                    self._assertGradReferenceChecks(
                        op,
                        inputs,
                        reference_outputs,
                        output_to_grad,
                        grad_reference,
                        threshold=threshold,
                    )
            return outs

    def assertValidationChecks(
        self,
        device_option,
        op,
        inputs,
        validator,
        input_device_options=None,
        as_kwargs=True,
        init_net=None,
    ):
        """Runs `op` and calls `validator` with its inputs and outputs, by
        blob name (as_kwargs) or as validator(inputs=..., outputs=...)."""
        if as_kwargs:
            assert len(set(list(op.input) + list(op.output))) == len(op.input) + len(
                op.output
            ), "in-place ops are not supported in as_kwargs mode"
        input_device_options = input_device_options or {}
        op = _with_device(op, device_option)
        with temp_workspace():
            _feed_inputs(op, inputs, device_option, input_device_options)
            if init_net:
                workspace.RunNetOnce(init_net)
            workspace.RunOperatorOnce(op)
            outputs = [workspace.FetchBlob(n) for n in op.output]
            if as_kwargs:
                validator(**dict(zip(list(op.input) + list(op.output), list(inputs) + outputs)))
            else:
                validator(inputs=inputs, outputs=outputs)

    def assertRunOpRaises(
        self,
        device_option,
        op,
        inputs,
        input_device_options=None,
        exception=(Exception,),
        regexp=None,
    ):
        """Asserts that running `op` raises `exception` (matching regexp)."""
        input_device_options = input_device_options or {}
        op = _with_device(op, device_option)
        with temp_workspace():
            _feed_inputs(op, inputs, device_option, input_device_options)
            if regexp is None:
                self.assertRaises(exception, workspace.RunOperatorOnce, op)
            else:
                self.assertRaisesRegex(exception, regexp, workspace.RunOperatorOnce, op)
