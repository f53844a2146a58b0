// Memonger: blob recycling. Renames blobs whose lifetimes do not overlap to one shared name, so
// that a net allocates fewer tensors. The result computes the same values: a blob is only given a
// shared name after the last op that touches the previous holder (strictly later in net order), so
// every op reads exactly the values it read before, and the dag executor's read/write-set
// dependencies (RAW, WAW, WAR) keep parallel execution correct.
//
// Blobs never renamed: external inputs and outputs, blobs read before any op writes them, blobs of
// ops with sub-nets (If, While...), and the caller's exclusions. Shared names are
// `<prefix>__m<k>_shared`; a blob that ends up alone in its slot keeps its name. With known shapes,
// a new blob takes the free slot that fits it best; otherwise the most recently freed one. Only
// blobs first written on the same device share.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"

namespace caffe2 {
namespace memonger {

// Training nets (memonger.share_grad_blobs): shares the `shareable_blobs` touched by the ops at
// `op_indices` (the gradient ops), except `heads` (the losses) and `dont_share_blobs`. Shared
// names get `namescope` as prefix.
NetDef ComputeBlobRecyclingForDag(const NetDef& net, const std::vector<std::string>& heads,
                                  const std::vector<int>& op_indices,
                                  const std::set<std::string>& shareable_blobs,
                                  const std::string& namescope,
                                  const std::set<std::string>& dont_share_blobs,
                                  const std::map<std::string, std::vector<int64_t>>& blob_shapes);

// Inference nets (memonger.optimize_inference_fast): shares every internal blob except
// `static_blobs` (parameters and whatever the caller reads afterwards).
NetDef OptimizeInferenceNet(const NetDef& net, const std::set<std::string>& static_blobs);

}  // namespace memonger
}  // namespace caffe2
