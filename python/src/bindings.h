// The extension module caffe2.python.caffe2_pybind11_state (spec §2): one init function per area.
// Messages cross the boundary as serialized protobuf bytes.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include <google/protobuf/message_lite.h>

#include "core/enforce.h"
#include "core/workspace.h"

namespace caffe2 {
namespace python {

namespace py = pybind11;

void init_workspace(py::module& m);
void init_blob(py::module& m);
void init_net(py::module& m);
void init_gradient(py::module& m);
void init_schema(py::module& m);
void init_db(py::module& m);
void init_memonger(py::module& m);
void init_python_op(py::module& m);
void init_distributed(py::module& m);

// The current workspace of the module-level functions (never null after import).
Workspace* CurrentWorkspace();

bool ParseProtoBytes(const std::string& bytes, google::protobuf::MessageLite* proto);

// Parses serialized bytes (limit 1 GiB); throws an error naming `what` when they are malformed.
template <class Proto>
Proto ParseProto(const std::string& bytes, const char* what) {
  Proto proto;
  C2_ENFORCE(ParseProtoBytes(bytes, &proto), "Cannot parse a ", what, " from the ", bytes.size(),
             " bytes given: they are not a serialized ", what);
  return proto;
}

// Running serialized defs in `ws` without the GIL (net_bindings.cc), for the module-level functions
// and the Workspace methods alike; a failure is an error naming the net, op or plan.
void RunNetOnceBytes(Workspace* ws, const std::string& net_def);
void RunOperatorOnceBytes(Workspace* ws, const std::string& op_def);
void RunPlanBytes(Workspace* ws, const std::string& plan_def);

// Feeding and fetching (feed_fetch.cc).
py::object FetchBlobObject(const Blob& blob, const std::string& name, bool raise_if_unknown);
void FeedBlobObject(Blob* blob, const py::object& arg, const py::object& device_option);
py::object TensorToNumpy(const Tensor& tensor);
// The numpy dtype of a Caffe2 element type (STRING maps to object).
py::dtype NumpyDtype(DataType type);
void NumpyToTensor(const py::object& arg, Tensor* tensor);

}  // namespace python
}  // namespace caffe2
