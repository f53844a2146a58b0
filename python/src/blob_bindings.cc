// Blob and TensorCPU classes, and blob (de)serialization (spec §2.3, §2.4).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "core/serialization.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {
namespace {

// An ndarray viewing the tensor's memory (kept alive by `owner`); strings are copied.
// An untyped tensor becomes float first.
py::object TensorData(Tensor* t, py::handle owner) {
  C2_ENFORCE(t->device().type == kCPU, "TensorCPU.data needs a CPU tensor, got ", t->DebugString());
  if (!t->initialized()) t->Resize(std::vector<int64_t>{0});
  if (!t->meta().initialized()) t->mutable_data<float>();
  if (t->dtype() == DataType::STRING) return TensorToNumpy(*t);
  std::vector<py::ssize_t> shape(t->dims().begin(), t->dims().end());
  return py::array(NumpyDtype(t->dtype()), shape, {}, t->raw_mutable_data(t->meta()), owner);
}

}  // namespace

void init_blob(py::module& m) {
  py::class_<Tensor>(m, "TensorCPU")
      .def_property_readonly("data",
                             [](py::object self) { return TensorData(self.cast<Tensor*>(), self); })
      .def("feed", [](Tensor* t, const py::object& arg) { NumpyToTensor(arg, t); })
      .def("fetch", [](Tensor* t) { return TensorToNumpy(*t); })
      .def("init",
           [](Tensor* t, const std::vector<int64_t>& dims, int caffe_type) {
             const TypeMeta& meta = TypeMeta::FromDataType(caffe_type);
             C2_ENFORCE(meta.id != DataType::STRING,
                        "TensorCPU.init cannot create a string tensor");
             t->Resize(dims);
             t->raw_mutable_data(meta);
           })
      .def_property_readonly("_shape", [](Tensor* t) { return t->dims(); })
      .def("_reshape", [](Tensor* t, const std::vector<int64_t>& dims) { t->Resize(dims); });

  py::class_<Blob>(m, "Blob")
      .def("serialize",
           [](Blob* b, const std::string& name) { return py::bytes(SerializeBlob(*b, name)); })
      .def("deserialize", [](Blob* b, const std::string& bytes) { DeserializeBlob(bytes, b); })
      .def("fetch", [](Blob* b) { return FetchBlobObject(*b, "", true); })
      .def(
          "tensor",
          [](Blob* b) {
            return b->GetMutableTensor(Device{kCPU, 0});
          },
          py::return_value_policy::reference_internal)
      .def(
          "_feed",
          [](Blob* b, const py::object& arg, const py::object& device_option) {
            FeedBlobObject(b, arg, device_option);
            return true;
          },
          py::arg("arg"), py::arg("device_option") = py::none());

  m.def("serialize_blob", [](const std::string& name) {
    const Blob* blob = CurrentWorkspace()->GetBlob(name);
    C2_ENFORCE(blob != nullptr, "Can't find blob: ", name);
    return py::bytes(SerializeBlob(*blob, name));
  });
  m.def("deserialize_blob", [](const std::string& name, const std::string& serialized) {
    DeserializeBlob(serialized, CurrentWorkspace()->CreateBlob(name));
  });
}

}  // namespace python
}  // namespace caffe2
