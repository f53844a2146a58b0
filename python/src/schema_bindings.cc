// Operator registry queries, engine preferences and the OpSchema class (spec §2.3, §2.4).
#include <pybind11/stl.h>

#include "core/gradient.h"
#include "core/op_schema.h"
#include "core/operator.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {

void init_schema(py::module& m) {
  m.def("registered_operators", [] { return OperatorRegistry::AllKeys(); });
  // Beyond upstream: the CPU registry's keys alone (the GPU module adds registered_cuda_operators),
  // and the engine preference in force (caffe2.python.build_info shows both).
  m.def("registered_cpu_operators", [] { return OperatorRegistry::Keys(kCPU); });
  m.def("global_engine_pref", [] { return GlobalEnginePref(); });
  m.def("op_registry_key", &OpRegistryKey);
  m.def("nearby_opnames", &OperatorRegistry::NearbyNames);
  m.def("set_per_op_engine_pref",
        [](const PerOpEnginePrefType& pref) { SetPerOpEnginePref(pref); });
  m.def("set_global_engine_pref",
        [](const GlobalEnginePrefType& pref) { SetGlobalEnginePref(pref); });
  m.def("set_engine_pref",
        [](const PerOpEnginePrefType& per_op, const GlobalEnginePrefType& global) {
          SetPerOpEnginePref(per_op);
          SetGlobalEnginePref(global);
        });
  m.def("set_op_engine_pref",
        [](const std::string& op_type, const std::map<int, std::vector<std::string>>& pref) {
          SetOpEnginePref(op_type, pref);
        });

  py::class_<OpSchema> schema(m, "OpSchema");
  py::class_<OpSchema::Argument>(schema, "Argument")
      .def_property_readonly("name", [](const OpSchema::Argument& a) { return a.name; })
      .def_property_readonly("description",
                             [](const OpSchema::Argument& a) { return a.description; })
      .def_property_readonly("required", [](const OpSchema::Argument& a) { return a.required; });
  schema.def_property_readonly("file", &OpSchema::file)
      .def_property_readonly("line", &OpSchema::line)
      .def_property_readonly("private", &OpSchema::is_private)
      .def_property_readonly("doc", &OpSchema::doc)
      .def_property_readonly("args", &OpSchema::args)
      .def_property_readonly("input_desc", &OpSchema::input_desc)
      .def_property_readonly("output_desc", &OpSchema::output_desc)
      .def_property_readonly("max_input", &OpSchema::max_input)
      .def_property_readonly("max_output", &OpSchema::max_output)
      .def_property_readonly("min_input", &OpSchema::min_input)
      .def_property_readonly("min_output", &OpSchema::min_output)
      .def_property_readonly("inf", [](const OpSchema&) { return OpSchema::kInf; })
      .def("CalculateOutput", &OpSchema::CalculateOutput)
      .def("num_inputs_allowed", &OpSchema::num_inputs_allowed)
      .def("num_outputs_allowed", &OpSchema::num_outputs_allowed)
      .def("num_inputs_outputs_allowed", &OpSchema::Allowed)
      .def("infer_tensor",
           [](const OpSchema& s, const std::string& op_def, const std::vector<py::bytes>& inputs) {
             auto def = ParseProto<OperatorDef>(op_def, "OperatorDef");
             std::vector<TensorShape> shapes;
             for (const auto& b : inputs)
               shapes.push_back(ParseProto<TensorShape>(b, "TensorShape"));
             std::vector<py::bytes> out;
             for (const auto& shape : s.InferTensor(def, shapes)) {
               out.push_back(py::bytes(shape.SerializeAsString()));
             }
             return out;
           })
      .def_static("get", &OpSchemaRegistry::Schema, py::return_value_policy::reference)
      .def_static("get_cpu_impl",
                  [](const std::string& name) {
                    return OperatorRegistry::Find(kCPU, name) ? name + " (CPU)" : std::string();
                  })
      .def_static("get_cuda_impl",
                  [](const std::string& name) {
                    return OperatorRegistry::Find(kCUDA, name) ? name + " (CUDA)" : std::string();
                  })
      .def_static("get_gradient_impl", [](const std::string& name) {
        return GradientRegistry::Has(name) ? name + " (gradient)" : std::string();
      });
}

}  // namespace python
}  // namespace caffe2
