// Nets, operators, plans, benchmarking, shape inference and the Predictor (spec §2.3, §2.4).
#include <pybind11/stl.h>

#include "core/logging.h"
#include "core/net.h"
#include "core/op_schema.h"
#include "core/predictor.h"
#include "core/shape_inference.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {
namespace {

std::vector<NetDef> ParseNets(const std::vector<py::bytes>& nets) {
  std::vector<NetDef> defs;
  for (const auto& b : nets) defs.push_back(ParseProto<NetDef>(std::string(b), "NetDef"));
  return defs;
}

bool RunNetChecked(Workspace* ws, const std::string& name, int num_iter, bool allow_fail) {
  C2_ENFORCE(num_iter >= 0, "RunNet of net ", name, ": num_iter must be >= 0, got ", num_iter);
  py::gil_scoped_release release;
  bool result = true;
  ws->WithNetRun(name, [&](NetBase* net) {
    for (int i = 0; i < num_iter && result; ++i) {
      bool ok;
      try {
        ok = net->Run();
      } catch (const std::exception& e) {
        if (!allow_fail) throw;
        C2_LOG(Error) << "Net " << name << " failed: " << e.what();
        result = false;
        return;
      }
      if (!ok) {
        C2_ENFORCE(allow_fail, "Net ", name, " failed: an operator reported failure");
        result = false;
      }
    }
  });
  return result;
}

}  // namespace

void RunNetOnceBytes(Workspace* ws, const std::string& net_def) {
  auto def = ParseProto<NetDef>(net_def, "NetDef");
  py::gil_scoped_release release;
  C2_ENFORCE(ws->RunNetOnce(def), "Net ", def.name(), " failed: an operator reported failure");
}

void RunOperatorOnceBytes(Workspace* ws, const std::string& op_def) {
  auto def = ParseProto<OperatorDef>(op_def, "OperatorDef");
  py::gil_scoped_release release;
  ws->RunOperatorOnce(def);
}

void RunPlanBytes(Workspace* ws, const std::string& plan_def) {
  auto def = ParseProto<PlanDef>(plan_def, "PlanDef");
  py::gil_scoped_release release;
  C2_ENFORCE(ws->RunPlan(def), "Plan ", def.name(), " failed");
}

namespace {

std::vector<py::object> TensorsToNumpy(const std::vector<const Tensor*>& tensors) {
  std::vector<py::object> out;
  for (const Tensor* t : tensors) out.push_back(TensorToNumpy(*t));
  return out;
}

}  // namespace

void init_net(py::module& m) {
  py::class_<NetBase>(m, "Net").def("run", [](NetBase* net) {
    py::gil_scoped_release release;
    C2_ENFORCE(net->Run(), "Net ", net->Name(), " failed");
  });

  m.def(
      "create_net",
      [](const std::string& net_def, bool overwrite) {
        CurrentWorkspace()->CreateNet(ParseProto<NetDef>(net_def, "NetDef"), overwrite);
        return true;
      },
      py::arg("net_def"), py::arg("overwrite") = false);
  m.def(
      "run_net",
      [](const std::string& name, int num_iter, bool allow_fail) {
        return RunNetChecked(CurrentWorkspace(), name, num_iter, allow_fail);
      },
      py::arg("name"), py::arg("num_iter") = 1, py::arg("allow_fail") = false);
  m.def("delete_net", [](const std::string& name) {
    CurrentWorkspace()->DeleteNet(name);
    return true;
  });
  m.def("nets", [] { return CurrentWorkspace()->Nets(); });
  m.def(
      "benchmark_net",
      [](const std::string& name, int warmup_runs, int main_runs, bool run_individual) {
        py::gil_scoped_release release;
        std::vector<float> times;
        CurrentWorkspace()->WithNetRun(name, [&](NetBase* net) {
          times = net->TEST_Benchmark(warmup_runs, main_runs, run_individual);
        });
        return times;
      },
      py::arg("name"), py::arg("warmup_runs"), py::arg("main_runs"), py::arg("run_individual"));
  m.def(
      "write_net_timeline",
      [](const std::string& name, const std::string& path) {
        NetBase* net = CurrentWorkspace()->GetNet(name);
        C2_ENFORCE(net != nullptr, "Can't find net ", name);
        net->WriteTimeline(path);
      },
      py::arg("name"), py::arg("path") = "");
  m.def("run_operator_once", [](const std::string& op_def) {
    RunOperatorOnceBytes(CurrentWorkspace(), op_def);
    return true;
  });
  m.def("run_net_once", [](const std::string& net_def) {
    RunNetOnceBytes(CurrentWorkspace(), net_def);
    return true;
  });
  m.def("run_plan", [](const std::string& plan_def) {
    RunPlanBytes(CurrentWorkspace(), plan_def);
    return true;
  });

  m.def("infer_shapes_and_types_from_workspace", [](const std::vector<py::bytes>& nets) {
    TensorShapes shapes = InferBlobShapesAndTypesFromWorkspace(CurrentWorkspace(), ParseNets(nets));
    return py::bytes(shapes.SerializeAsString());
  });
  m.def("infer_shapes_and_types_from_map",
        [](const std::vector<py::bytes>& nets,
           const std::map<std::string, std::vector<int64_t>>& dims) {
          TensorShapes shapes = InferBlobShapesAndTypesFromMap(dims, ParseNets(nets));
          return py::bytes(shapes.SerializeAsString());
        });
  m.def("get_operator_cost", [](const std::string& op_def, const std::vector<std::string>& inputs) {
    auto def = ParseProto<OperatorDef>(op_def, "OperatorDef");
    const OpSchema* schema = OpSchemaRegistry::Schema(def.type());
    C2_ENFORCE(schema && schema->HasCostInference(), "[", def.type(), "] has no cost inference");
    std::vector<TensorShape> shapes;
    for (const auto& name : inputs) {
      const Blob* blob = CurrentWorkspace()->GetBlob(name);
      C2_ENFORCE(blob != nullptr, "Can't find blob: ", name);
      shapes.push_back(GetTensorShapeOfBlob(*blob));
    }
    auto cost = schema->InferCost(def, shapes);
    return py::make_tuple(cost.flops, cost.bytes_moved);
  });
  m.def("infer_op_input_output_device", [](const std::string& op_def) {
    auto def = ParseProto<OperatorDef>(op_def, "OperatorDef");
    const OpSchema* schema = OpSchemaRegistry::Schema(def.type());
    C2_ENFORCE(schema != nullptr, "[", def.type(), "] has no schema to infer devices from");
    auto devices = schema->InferDevice(def);
    std::vector<py::bytes> in, out;
    for (const auto& d : devices.first) in.push_back(py::bytes(d.SerializeAsString()));
    for (const auto& d : devices.second) out.push_back(py::bytes(d.SerializeAsString()));
    return py::make_tuple(in, out);
  });

  py::class_<Predictor>(m, "Predictor")
      .def(py::init([](const std::string& init_net, const std::string& predict_net) {
        return new Predictor(ParseProto<NetDef>(init_net, "NetDef"),
                             ParseProto<NetDef>(predict_net, "NetDef"), CurrentWorkspace());
      }))
      .def("run",
           [](Predictor* p, const std::vector<py::object>& inputs) {
             std::vector<std::unique_ptr<Tensor>> tensors;
             std::vector<const Tensor*> ptrs;
             for (const auto& in : inputs) {
               tensors.push_back(std::make_unique<Tensor>());
               NumpyToTensor(in, tensors.back().get());
               ptrs.push_back(tensors.back().get());
             }
             std::vector<const Tensor*> outputs;
             {
               py::gil_scoped_release release;
               outputs = p->Run(ptrs);
             }
             return TensorsToNumpy(outputs);
           })
      .def("run", [](Predictor* p, const std::map<std::string, py::object>& inputs) {
        std::vector<std::unique_ptr<Tensor>> tensors;
        std::map<std::string, const Tensor*> ptrs;
        for (const auto& kv : inputs) {
          tensors.push_back(std::make_unique<Tensor>());
          NumpyToTensor(kv.second, tensors.back().get());
          ptrs[kv.first] = tensors.back().get();
        }
        std::vector<const Tensor*> outputs;
        {
          py::gil_scoped_release release;
          outputs = p->RunMap(ptrs);
        }
        return TensorsToNumpy(outputs);
      });
}

}  // namespace python
}  // namespace caffe2
