// The executors CreateNet (core/net.h) chooses between, by NetDef type: the simple one runs ops in
// order (net_simple.cc), the DAG one runs them on a thread pool as their dependencies finish
// (net_dag.cc).
#pragma once

#include <memory>

#include "caffe2/proto/caffe2.pb.h"
#include "core/net.h"

namespace caffe2 {

class Workspace;

std::unique_ptr<NetBase> CreateSimpleNet(const NetDef& def, Workspace* ws);
std::unique_ptr<NetBase> CreateDAGNet(const NetDef& def, Workspace* ws);

}  // namespace caffe2
