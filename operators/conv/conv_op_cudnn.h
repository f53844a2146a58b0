// The cuDNN engine of Conv and ConvGradient (the math, shapes and outputs are conv_op.h's),
// registered for CUDA as Conv, Conv1D/2D/3D and their Gradient types, each also with _ENGINE_CUDNN.
//
// Types: X, filter, bias (and dY) all float or all float16. Compute: float32 data runs in strict
// fp32 (CUDNN_FMA_MATH; CUDNN_DEFAULT_MATH would let cuDNN use TF32 tensor cores on sm80+, changing
// results by ~1e-3 relative) unless allow_tf32=1. float16 data computes in fp32 unless
// float16_compute=1 (fp16 accumulation) and may use tensor cores unless enable_tensor_core=0.
//
// Arguments besides conv_pool_op_base.h's:
//   exhaustive_search (bool, 0)   time the algorithms (cudnnFind*AlgorithmEx) instead of taking the
//                                 first of cuDNN's heuristic list (cudnnGet*Algorithm_v7) that
//                                 fits; also --caffe2_exhaustive_search. Timed choices are recorded
//                                 in the autotune cache (core/autotune_cache.h), and a recorded
//                                 choice is used by every process given the cache file
//                                 (docs/determinism.md)
//   ws_nbytes_limit (int, 64 MiB) the most workspace an algorithm may use (upstream's
//                                 kCONV_CUDNN_WORKSPACE_LIMIT_BYTES, 8 * 8 MiB)
//   deterministic (bool, 1)       only algorithms cuDNN reports deterministic (upstream's default
//                                 was 0; deterministic=0 admits e.g. the atomics of some backward
//                                 filter algorithms, whose sums depend on scheduling)
//   allow_tf32, float16_compute, enable_tensor_core (bool, 0 / 0 / 1), see above
// The chosen algorithm of each pass (forward, backward data, backward filter) is cached per element
// type, X dims, filter dims and window arguments, so a repeated shape does not search again;
// algorithm_searches() counts the searches. The workspace is a GPU tensor per op that only grows
// (through the caching allocator).
//
// cuDNN pads both sides of a dim alike: a geometry whose pads differ (SAME with an odd pad,
// explicit pads) runs on cuDNN when padding by pad_head on both sides gives the same output
// (ConvPoolGeometry::FitsSymmetricPads), else on the CPU kernel through GPUFallbackOp (float only).
// A case for which cuDNN reports no supported algorithm (e.g. a layout its legacy API lacks) also
// runs on the CPU kernel, with a warning; algorithms that exist but exceed ws_nbytes_limit (or are
// not deterministic when asked) are an error naming the limit.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/cuda/gpu_fallback_op.h"
#include "core/operator.h"
#include "operators/common/cudnn_descriptors.h"
#include "operators/conv/conv_op.h"

namespace caffe2 {

// One chosen algorithm: its enum value, the math type to run it with and its workspace size; or
// supported = false when cuDNN has no algorithm at all for the case (the op then runs the CPU
// kernel).
struct CudnnConvAlgo {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace = 0;
  bool supported = true;
};

class CudnnConvOpBase : public Operator<CUDAContext> {
 public:
  CudnnConvOpBase(const OperatorDef& def, Workspace* ws);
  // Algorithm searches run so far (one per pass and new shape).
  int algorithm_searches() const { return algorithm_searches_; }

 protected:
  // Describes X, Y (or dY), the filter, the bias and the convolution for one call.
  void SetDescriptors(const ConvShape& s, cudnnDataType_t type, const Tensor& X, const Tensor& W);
  // The cached or newly chosen algorithm of a pass; the buffers serve exhaustive search's timing
  // runs (their contents are overwritten).
  CudnnConvAlgo ForwardAlgo(const void* x, const void* w, void* y);
  CudnnConvAlgo BackwardDataAlgo(const void* w, const void* dy, void* dx);
  CudnnConvAlgo BackwardFilterAlgo(const void* x, const void* dy, void* dw);
  // At least `bytes` of GPU scratch (null for 0).
  void* WorkspaceBuffer(size_t bytes);
  // Runs the CPU kernel for a geometry cuDNN cannot express.
  bool RunFallback();

  ConvPoolArgs args_;
  bool exhaustive_search_, deterministic_, allow_tf32_, float16_compute_, enable_tensor_core_;
  size_t ws_limit_;
  CudnnTensorDescriptor x_desc_, y_desc_, bias_desc_;
  CudnnFilterDescriptor w_desc_;
  CudnnConvolutionDescriptor conv_desc_;

 private:
  cudnnMathType_t RequestedMath() const;
  bool MathAllowed(cudnnMathType_t math) const;
  std::string RecordKey(const char* pass) const;
  template <class Perf, class Search, class WorkspaceSize>
  CudnnConvAlgo Choose(const char* pass, int max_count, Search search,
                       WorkspaceSize workspace_size);

  cudnnDataType_t type_ = CUDNN_DATA_FLOAT;
  std::vector<int64_t> key_;  // element type, X dims, filter dims of the current call
  std::map<std::vector<int64_t>, CudnnConvAlgo> forward_, backward_data_, backward_filter_;
  int algorithm_searches_ = 0;
  Tensor workspace_;
  LazyGPUFallback fallback_;
};

// [X, filter, bias?] -> [Y].
class CudnnConvOp final : public CudnnConvOpBase {
 public:
  using CudnnConvOpBase::CudnnConvOpBase;
  bool RunOnDevice() override;
};

// [X, filter, dY] -> [dfilter, dbias?, dX?] (no_bias=1 drops dbias).
class CudnnConvGradientOp final : public CudnnConvOpBase {
 public:
  CudnnConvGradientOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;

 private:
  bool no_bias_;
};

}  // namespace caffe2
