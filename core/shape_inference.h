// Shape and type inference over nets (spec §5.5): walks the ops of each net in order, applying each
// op's schema inference to the shapes known so far. Ops with an input of unknown shape are skipped.
// Gradient blobs "X_grad" whose shape stays unknown take the shape of "X".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"

namespace caffe2 {

class Blob;
class Workspace;

// Shape and type of a tensor blob; unknown_shape for other blob types.
TensorShape GetTensorShapeOfBlob(const Blob& blob);

// Seeds with the tensors currently in the workspace.
TensorShapes InferBlobShapesAndTypesFromWorkspace(Workspace* ws, const std::vector<NetDef>& nets);
// Seeds with the given dims (type FLOAT); every dim must be positive.
TensorShapes InferBlobShapesAndTypesFromMap(const std::map<std::string, std::vector<int64_t>>& dims,
                                            const std::vector<NetDef>& nets);

}  // namespace caffe2
