// Schema arguments shared by the convolution and pooling ops, declared once here for every schema
// whose kernels read them (the window arguments are parsed by ConvPoolArgs, conv_pool_op_base.h,
// which also has their rules and output sizes).
//
// Each helper adds its arguments to a schema and returns it. OPERATOR_SCHEMA(Op) names its schema
// c2_op_schema_Op, so a helper applies right after the schema's chain, in the same file:
//   OPERATOR_SCHEMA(MaxPool).NumInputs(1)...;
//   static OpSchema& c2_max_pool_args [[maybe_unused]] = AddConvPoolArgs(c2_op_schema_MaxPool);
// (scripts/check_schema_args.py reads the arguments of a schema from this pattern.)
#pragma once

#include "core/op_schema.h"

namespace caffe2 {

// The window of every conv and pool op: kernel, stride, dilation and pad in their scalar, _h/_w and
// list forms, the four side pads, order, legacy_pad and global_pooling.
OpSchema& AddConvPoolArgs(OpSchema& schema);

// The options of the cuDNN engine of Conv and ConvGradient (conv_op_cudnn.h): exhaustive_search
// (which the DNNL engine also reads), ws_nbytes_limit, deterministic, allow_tf32, float16_compute
// and enable_tensor_core.
OpSchema& AddCudnnConvArgs(OpSchema& schema);

// ConvTranspose's output adjustment: adj | adj_h + adj_w | adjs.
OpSchema& AddConvTransposeArgs(OpSchema& schema);

}  // namespace caffe2
