// Named workspaces and the module-level workspace functions (spec §2.2, §2.3), and the Workspace
// class (spec §2.4).
#include <pybind11/stl.h>

#include <map>
#include <memory>

#include "core/autotune_cache.h"
#include "core/build_info.h"
#include "core/flags.h"
#include "core/init.h"
#include "core/net.h"
#include "core/operator.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {
namespace {

std::map<std::string, std::unique_ptr<Workspace>>& Workspaces() {
  static auto* ws = new std::map<std::string, std::unique_ptr<Workspace>>();
  return *ws;
}
Workspace* gWorkspace = nullptr;
std::string gCurrentWorkspaceName;

void SwitchWorkspaceByName(const std::string& name, bool create_if_missing) {
  auto it = Workspaces().find(name);
  if (it == Workspaces().end()) {
    C2_ENFORCE(create_if_missing, "Workspace ", name, " does not exist");
    it = Workspaces().emplace(name, std::make_unique<Workspace>()).first;
  }
  gWorkspace = it->second.get();
  gCurrentWorkspaceName = name;
}

}  // namespace

Workspace* CurrentWorkspace() {
  C2_ENFORCE(gWorkspace != nullptr, "No current workspace");
  return gWorkspace;
}

void init_workspace(py::module& m) {
  SwitchWorkspaceByName("default", true);

  m.attr("is_asan") = false;
  m.attr("has_mkldnn") = false;
  m.attr("define_caffe2_no_operator_schema") = false;

  m.def("global_init", [](const std::vector<std::string>& args) { GlobalInit(args); });
  m.def("get_build_options", [] { return BuildOptions(); });
  // Beyond upstream: the autotune cache of timed kernel choices (docs/determinism.md).
  m.def("autotune_machine", [] { return AutotuneMachine(); });
  m.def("autotune_forget", [] { AutotuneForget(); });
  m.def("on_module_exit", [] {
    gWorkspace = nullptr;
    Workspaces().clear();
  });

  m.def("switch_workspace", [](Workspace* ws, py::object) { gWorkspace = ws; });
  m.def(
      "switch_workspace",
      [](const std::string& name, const py::object& create_if_missing) {
        SwitchWorkspaceByName(name, !create_if_missing.is_none() && py::bool_(create_if_missing));
      },
      py::arg("name"), py::arg("create_if_missing") = py::none());
  m.def(
      "reset_workspace",
      [](const py::object& root_folder) {
        // Any name is a workspace's name, the empty one included (upstream's gradient checker
        // names its workspace str(device_option), which is '' for the default CPU option).
        std::string root =
            root_folder.is_none() ? std::string(".") : root_folder.cast<std::string>();
        auto& slot = Workspaces()[gCurrentWorkspaceName];
        if (slot) slot->CheckIdle("reset workspace '" + gCurrentWorkspaceName + "'");
        slot.reset();  // destroy the old one first: its nets may hold big buffers
        slot = std::make_unique<Workspace>(root);
        gWorkspace = slot.get();
        return true;
      },
      py::arg("root_folder") = py::none());
  m.def("root_folder", [] { return CurrentWorkspace()->RootFolder(); });
  m.def("current_workspace", [] { return gCurrentWorkspaceName; });
  m.def("workspaces", [] {
    std::vector<std::string> names;
    for (const auto& kv : Workspaces()) names.push_back(kv.first);
    return names;
  });
  m.def("local_blobs", [] { return CurrentWorkspace()->LocalBlobs(); });
  m.def("blobs", [] { return CurrentWorkspace()->Blobs(); });
  m.def("has_blob", [](const std::string& name) { return CurrentWorkspace()->HasBlob(name); });
  m.def("create_blob", [](const std::string& name) {
    CurrentWorkspace()->CreateBlob(name);
    return true;
  });
  m.def("fetch_blob", [](const std::string& name) {
    const Blob* blob = CurrentWorkspace()->GetBlob(name);
    C2_ENFORCE(blob != nullptr, "Can't find blob: ", name);
    return FetchBlobObject(*blob, name, false);
  });
  m.def(
      "feed_blob",
      [](const std::string& name, const py::object& arg, const py::object& device_option) {
        Workspace* ws = CurrentWorkspace();
        ws->CheckBlobFree(name, "feed");
        FeedBlobObject(ws->CreateBlob(name), arg, device_option);
        return true;
      },
      py::arg("name"), py::arg("arg"), py::arg("device_option") = py::none());

  m.def("get_stats", [] { return std::map<std::string, int64_t>(); });
  m.def("is_numa_enabled", [] { return false; });
  m.def("get_num_numa_nodes", [] { return 1; });
  m.def("get_blob_numa_node", [](const std::string& name) {
    C2_ENFORCE(CurrentWorkspace()->HasBlob(name), "Can't find blob: ", name);
    return -1;
  });
  m.def("builtin_cpu_supports_avx2",
        [] { return static_cast<bool>(__builtin_cpu_supports("avx2")); });

  py::class_<Workspace>(m, "Workspace")
      .def(py::init<>())
      .def(py::init([](Workspace* parent) { return new Workspace(parent); }),
           py::keep_alive<1, 2>())
      .def_property_readonly("nets",
                             [](Workspace* self) {
                               py::dict nets;
                               for (const auto& name : self->Nets()) {
                                 nets[py::str(name)] = py::cast(self->GetNet(name),
                                                                py::return_value_policy::reference);
                               }
                               return nets;
                             })
      .def_property_readonly("blobs",
                             [](Workspace* self) {
                               py::dict blobs;
                               for (const auto& name : self->Blobs()) {
                                 blobs[py::str(name)] = py::cast(
                                     self->GetBlob(name), py::return_value_policy::reference);
                               }
                               return blobs;
                             })
      .def(
          "_create_net",
          [](Workspace* self, const std::string& def, bool overwrite) {
            auto proto = ParseProto<NetDef>(def, "NetDef");
            return self->CreateNet(proto, overwrite);
          },
          py::arg("def"), py::arg("overwrite") = false, py::return_value_policy::reference)
      .def(
          "create_blob",
          [](Workspace* self, const std::string& name) { return self->CreateBlob(name); },
          py::return_value_policy::reference)
      .def("fetch_blob",
           [](Workspace* self, const std::string& name) {
             const Blob* blob = self->GetBlob(name);
             C2_ENFORCE(blob != nullptr, "Can't find blob: ", name);
             return FetchBlobObject(*blob, name, false);
           })
      .def("has_blob", [](Workspace* self, const std::string& name) { return self->HasBlob(name); })
      .def("_run_net", &RunNetOnceBytes)
      .def("_run_operator", &RunOperatorOnceBytes)
      .def("_run_plan", &RunPlanBytes)
      .def("_last_failed_op_net_position",
           [](Workspace* self) { return self->last_failed_op_net_position.load(); })
      .def_property_readonly_static("current", [](py::object) {
        return py::cast(CurrentWorkspace(), py::return_value_policy::reference);
      });
}

}  // namespace python
}  // namespace caffe2
