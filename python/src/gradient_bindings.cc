// GradientWrapper and get_gradient_defs: the C++ gradient makers as seen by core.GradientRegistry.
#include <pybind11/stl.h>

#include "core/gradient.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {

void init_gradient(py::module& m) {
  py::class_<GradientWrapper>(m, "GradientWrapper")
      .def(py::init<>())
      .def_readwrite("dense", &GradientWrapper::dense_)
      .def_readwrite("indices", &GradientWrapper::indices_)
      .def_readwrite("values", &GradientWrapper::values_)
      .def("is_sparse", &GradientWrapper::IsSparse)
      .def("is_dense", &GradientWrapper::IsDense)
      .def("is_empty", &GradientWrapper::IsEmpty);

  m.def("get_gradient_defs",
        [](const std::string& op_def, const std::vector<GradientWrapper>& g_output) {
          auto def = ParseProto<OperatorDef>(op_def, "OperatorDef");
          C2_ENFORCE(GradientRegistry::Has(def.type()), "[", def.type(),
                     "] has no gradient registered in C++");
          GradientOpsMeta meta = GetGradientForOp(def, g_output);
          std::vector<py::bytes> ops;
          for (const auto& op : meta.ops_) ops.push_back(py::bytes(op.SerializeAsString()));
          return std::make_pair(ops, meta.g_input_);
        });
}

}  // namespace python
}  // namespace caffe2
