// Memonger passes (spec §3.10): blob recycling for training and inference nets.
#include <pybind11/stl.h>

#include "core/memonger.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {

void init_memonger(py::module& m) {
  m.def("memonger_compute_blob_recycling_for_dag",
        [](const std::string& net_def, const std::vector<std::string>& heads,
           const std::vector<int>& op_indices, const std::set<std::string>& shareable_blobs,
           const std::string& namescope, const std::set<std::string>& dont_share_blobs,
           const std::map<std::string, std::vector<int64_t>>& blob_shapes) {
          auto net = ParseProto<NetDef>(net_def, "NetDef");
          NetDef out;
          {
            py::gil_scoped_release release;
            out = memonger::ComputeBlobRecyclingForDag(net, heads, op_indices, shareable_blobs,
                                                       namescope, dont_share_blobs, blob_shapes);
          }
          return py::bytes(out.SerializeAsString());
        });
  m.def("memonger_optimize_inference_net",
        [](const std::string& net_def, const std::vector<std::string>& static_blobs) {
          auto net = ParseProto<NetDef>(net_def, "NetDef");
          const std::set<std::string> statics(static_blobs.begin(), static_blobs.end());
          return py::bytes(memonger::OptimizeInferenceNet(net, statics).SerializeAsString());
        });
}

}  // namespace python
}  // namespace caffe2
