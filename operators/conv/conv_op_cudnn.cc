#include "operators/conv/conv_op_cudnn.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>
#include <string>

#include "core/autotune_cache.h"
#include "core/cuda/gpu_fallback_op.h"
#include "core/logging.h"

namespace caffe2 {
namespace {

// Upstream's kCONV_CUDNN_WORKSPACE_LIMIT_BYTES.
constexpr int64_t kDefaultWorkspaceLimit = 8 * 8 * 1024 * 1024;

void CheckSameType(const Tensor& t, const Tensor& X, const char* what) {
  C2_ENFORCE(t.meta() == X.meta(), what, " ", Tensor::DimsString(t.dims()), " is ", t.meta().name,
             " but X is ", X.meta().name, "; cuDNN needs one element type");
}

const char* MathName(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH:
      return "DEFAULT";
    case CUDNN_TENSOR_OP_MATH:
      return "TENSOR_OP";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
      return "TENSOR_OP_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH:
      return "FMA";
  }
  return "?";
}

// The name of a GPU, for the autotune cache's keys.
const std::string& GpuName(int device) {
  static std::mutex mutex;
  static std::map<int, std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = names.find(device);
  if (it == names.end()) {
    cudaDeviceProp prop;
    std::string name =
        cudaGetDeviceProperties(&prop, device) == cudaSuccess ? prop.name : "unknown-gpu";
    std::replace(name.begin(), name.end(), ' ', '_');
    it = names.emplace(device, name).first;
  }
  return it->second;
}

}  // namespace

CudnnConvOpBase::CudnnConvOpBase(const OperatorDef& def, Workspace* ws)
    : Operator<CUDAContext>(def, ws),
      args_(ArgumentHelper(def)),
      exhaustive_search_(
          ExhaustiveSearchEnabled(GetSingleArgument<bool>("exhaustive_search", false))),
      deterministic_(GetSingleArgument<bool>("deterministic", true)),
      allow_tf32_(GetSingleArgument<bool>("allow_tf32", false)),
      float16_compute_(GetSingleArgument<bool>("float16_compute", false)),
      enable_tensor_core_(GetSingleArgument<bool>("enable_tensor_core", true)),
      workspace_(context_.device()) {
  const int64_t limit = GetSingleArgument<int64_t>("ws_nbytes_limit", kDefaultWorkspaceLimit);
  C2_ENFORCE(limit >= 0, "ws_nbytes_limit must be >= 0, got ", limit);
  ws_limit_ = static_cast<size_t>(limit);
}

cudnnMathType_t CudnnConvOpBase::RequestedMath() const {
  if (type_ == CUDNN_DATA_HALF)
    return enable_tensor_core_ ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH;
  return allow_tf32_ ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

bool CudnnConvOpBase::MathAllowed(cudnnMathType_t math) const {
  const bool tensor_op =
      math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  if (!tensor_op) return true;
  return type_ == CUDNN_DATA_HALF ? enable_tensor_core_ : allow_tf32_;
}

void CudnnConvOpBase::SetDescriptors(const ConvShape& s, cudnnDataType_t type, const Tensor& X,
                                     const Tensor& W) {
  type_ = type;
  const bool nhwc = s.g.order == StorageOrder::NHWC;
  SetImageDescriptor(x_desc_, type, s.N, s.C, s.g.in, nhwc);
  SetImageDescriptor(y_desc_, type, s.N, s.M, s.g.out, nhwc);
  SetFilterDescriptor(w_desc_, type, s.M, s.Cg,
                      std::vector<int64_t>(s.g.kernel.begin(), s.g.kernel.end()), nhwc);
  const int n = std::max(2, s.g.spatial_dims());
  SetChannelDescriptor(bias_desc_, type, s.M, n + 2);
  std::vector<int> pad(n, 0), stride(n, 1), dilation(n, 1);
  for (int i = 0; i < s.g.spatial_dims(); ++i) {
    pad[i] = s.g.pad_head[i];
    stride[i] = s.g.stride[i];
    dilation[i] = s.g.dilation[i];
  }
  const cudnnDataType_t compute =
      type == CUDNN_DATA_HALF && float16_compute_ ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  C2_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(
      conv_desc_, n, pad.data(), stride.data(), dilation.data(), CUDNN_CROSS_CORRELATION, compute));
  C2_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_desc_, CudnnDim(s.group, "group")));
  key_.assign({static_cast<int64_t>(type)});
  key_.insert(key_.end(), X.dims().begin(), X.dims().end());
  key_.push_back(-1);
  key_.insert(key_.end(), W.dims().begin(), W.dims().end());
  key_.push_back(-2);
  key_.insert(key_.end(), pad.begin(), pad.end());
  key_.insert(key_.end(), stride.begin(), stride.end());
  key_.insert(key_.end(), dilation.begin(), dilation.end());
  key_.push_back(s.group);
}

// The autotune cache's key of a pass of the current call: the GPU and cuDNN version, the policy
// (math, determinism, workspace limit) and key_.
std::string CudnnConvOpBase::RecordKey(const char* pass) const {
  std::ostringstream k;
  k << "cudnn_conv." << pass << " " << GpuName(context_.device().id) << " cudnn"
    << cudnnGetVersion() << " math" << static_cast<int>(RequestedMath()) << " det" << deterministic_
    << " ws" << ws_limit_ << " " << Tensor::DimsString(key_);
  std::string key = k.str();
  std::replace(key.begin(), key.end(), '\t', ' ');
  return key;
}

void* CudnnConvOpBase::WorkspaceBuffer(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (workspace_.nbytes() < bytes) workspace_.Resize(static_cast<int64_t>(bytes));
  return workspace_.mutable_data<uint8_t>();
}

bool CudnnConvOpBase::RunFallback() { return fallback_.Run(*this); }

// A recorded choice of the autotune cache (core/autotune_cache.h) when there is one that still fits
// the policy; else asks cuDNN for its ranked algorithms of a pass (timed when exhaustive_search,
// the choice then recorded) and keeps the first that succeeded, honours `deterministic` and the
// math policy, and whose workspace fits ws_nbytes_limit.
template <class Perf, class Search, class WorkspaceSize>
CudnnConvAlgo CudnnConvOpBase::Choose(const char* pass, int max_count, Search search,
                                      WorkspaceSize workspace_size) {
  using Algo = decltype(Perf().algo);
  const std::string record_key = RecordKey(pass);
  if (auto recorded = AutotuneLookup(record_key)) {
    int algo = 0, math = 0;
    size_t bytes = 0;
    if (std::sscanf(recorded->c_str(), "algo%d math%d", &algo, &math) == 2 &&
        MathAllowed(static_cast<cudnnMathType_t>(math)) &&
        cudnnSetConvolutionMathType(conv_desc_, static_cast<cudnnMathType_t>(math)) ==
            CUDNN_STATUS_SUCCESS &&
        workspace_size(static_cast<Algo>(algo), &bytes) == CUDNN_STATUS_SUCCESS &&
        bytes <= ws_limit_) {
      return CudnnConvAlgo{algo, static_cast<cudnnMathType_t>(math), bytes, true};
    }
    C2_LOG(Warning) << "[" << type() << "] ignoring the autotune record '" << *recorded << "' for "
                    << record_key;
  }
  ++algorithm_searches_;
  C2_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, RequestedMath()));
  std::vector<Perf> perf(std::max(max_count, 1));
  int returned = 0;
  const cudnnStatus_t status = search(static_cast<int>(perf.size()), &returned, perf.data());
  bool any_supported = false;
  std::ostringstream offered;
  if (status == CUDNN_STATUS_SUCCESS) {
    for (int i = 0; i < returned; ++i) {
      const Perf& p = perf[i];
      offered << " [algo " << static_cast<int>(p.algo) << " status "
              << cudnnGetErrorString(p.status) << " math " << MathName(p.mathType) << " memory "
              << p.memory << "]";
      if (p.status != CUDNN_STATUS_SUCCESS) continue;
      any_supported = true;
      if (deterministic_ && p.determinism != CUDNN_DETERMINISTIC) continue;
      if (!MathAllowed(p.mathType)) continue;
      C2_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, p.mathType));
      size_t bytes = 0;
      if (workspace_size(p.algo, &bytes) != CUDNN_STATUS_SUCCESS || bytes > ws_limit_) continue;
      if (exhaustive_search_) {
        // Timed: recorded so that other processes make the same choice (docs/determinism.md).
        std::ostringstream choice;
        choice << "algo" << static_cast<int>(p.algo) << " math" << static_cast<int>(p.mathType);
        AutotuneRecord(record_key, choice.str());
      }
      return CudnnConvAlgo{static_cast<int>(p.algo), p.mathType, bytes, true};
    }
  } else {
    C2_ENFORCE(status == CUDNN_STATUS_NOT_SUPPORTED, "cuDNN's ", pass,
               " algorithm search failed: ", cudnnGetErrorString(status), " (",
               static_cast<int>(status), ") for key ", Tensor::DimsString(key_));
  }
  if (!any_supported) {
    C2_LOG(Warning) << "[" << type() << "] cuDNN supports no " << pass << " algorithm for key "
                    << Tensor::DimsString(key_)
                    << " (element type, X dims, -1, filter dims, -2, pads, strides, dilations, "
                       "group); running the CPU kernel";
    CudnnConvAlgo none;
    none.supported = false;
    return none;
  }
  C2_THROW(
      "cuDNN found no ", pass, " algorithm within ws_nbytes_limit=", ws_limit_,
      deterministic_ ? " (deterministic only)" : "", " for key ", Tensor::DimsString(key_),
      " (element type, X dims, -1, filter dims, -2, pads, strides, dilations, group); offered:",
      offered.str());
}

CudnnConvAlgo CudnnConvOpBase::ForwardAlgo(const void* x, const void* w, void* y) {
  auto it = forward_.find(key_);
  if (it != forward_.end()) return it->second;
  cudnnHandle_t h = context_.cudnn_handle();
  int max_count = 0;
  C2_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max_count));
  auto search = [&](int n, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
    if (exhaustive_search_) {
      return cudnnFindConvolutionForwardAlgorithmEx(h, x_desc_, x, w_desc_, w, conv_desc_, y_desc_,
                                                    y, n, returned, perf,
                                                    WorkspaceBuffer(ws_limit_), ws_limit_);
    }
    return cudnnGetConvolutionForwardAlgorithm_v7(h, x_desc_, w_desc_, conv_desc_, y_desc_, n,
                                                  returned, perf);
  };
  auto size = [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, x_desc_, w_desc_, conv_desc_, y_desc_, algo,
                                                   bytes);
  };
  const CudnnConvAlgo chosen =
      Choose<cudnnConvolutionFwdAlgoPerf_t>("forward", max_count, search, size);
  forward_.emplace(key_, chosen);
  return chosen;
}

CudnnConvAlgo CudnnConvOpBase::BackwardDataAlgo(const void* w, const void* dy, void* dx) {
  auto it = backward_data_.find(key_);
  if (it != backward_data_.end()) return it->second;
  cudnnHandle_t h = context_.cudnn_handle();
  int max_count = 0;
  C2_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max_count));
  auto search = [&](int n, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
    if (exhaustive_search_) {
      return cudnnFindConvolutionBackwardDataAlgorithmEx(h, w_desc_, w, y_desc_, dy, conv_desc_,
                                                         x_desc_, dx, n, returned, perf,
                                                         WorkspaceBuffer(ws_limit_), ws_limit_);
    }
    return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w_desc_, y_desc_, conv_desc_, x_desc_, n,
                                                       returned, perf);
  };
  auto size = [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, w_desc_, y_desc_, conv_desc_, x_desc_,
                                                        algo, bytes);
  };
  const CudnnConvAlgo chosen =
      Choose<cudnnConvolutionBwdDataAlgoPerf_t>("backward data", max_count, search, size);
  backward_data_.emplace(key_, chosen);
  return chosen;
}

CudnnConvAlgo CudnnConvOpBase::BackwardFilterAlgo(const void* x, const void* dy, void* dw) {
  auto it = backward_filter_.find(key_);
  if (it != backward_filter_.end()) return it->second;
  cudnnHandle_t h = context_.cudnn_handle();
  int max_count = 0;
  C2_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max_count));
  auto search = [&](int n, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
    if (exhaustive_search_) {
      return cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x_desc_, x, y_desc_, dy, conv_desc_,
                                                           w_desc_, dw, n, returned, perf,
                                                           WorkspaceBuffer(ws_limit_), ws_limit_);
    }
    return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x_desc_, y_desc_, conv_desc_, w_desc_,
                                                         n, returned, perf);
  };
  auto size = [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x_desc_, y_desc_, conv_desc_, w_desc_,
                                                          algo, bytes);
  };
  const CudnnConvAlgo chosen =
      Choose<cudnnConvolutionBwdFilterAlgoPerf_t>("backward filter", max_count, search, size);
  backward_filter_.emplace(key_, chosen);
  return chosen;
}

bool CudnnConvOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& W = Input(1);
  const cudnnDataType_t type = CudnnDataType(X, "X");
  CheckSameType(W, X, "filter");
  const ConvShape s = CheckConvShapes(args_, X.dims(), W.dims());
  const void* bias = nullptr;
  if (InputSize() == 3) {
    const Tensor& b = Input(2);
    CheckSameType(b, X, "bias");
    C2_ENFORCE(b.numel() == s.M, "bias ", Tensor::DimsString(b.dims()), " must hold ", s.M,
               " values, one per output channel of filter ", Tensor::DimsString(W.dims()));
    bias = b.raw_data();
  }
  if (!s.g.FitsSymmetricPads()) return RunFallback();
  Tensor* Y = Output(0);
  Y->Resize(s.g.OutputDims(s.M));
  void* y = Y->raw_mutable_data(X.meta());
  if (Y->numel() == 0) return true;
  SetDescriptors(s, type, X, W);
  const CudnnConvAlgo algo = ForwardAlgo(X.raw_data(), W.raw_data(), y);
  if (!algo.supported) return RunFallback();
  cudnnHandle_t h = context_.cudnn_handle();
  const float one = 1.f, zero = 0.f;
  C2_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, algo.math));
  C2_CUDNN_CHECK(
      cudnnConvolutionForward(h, &one, x_desc_, X.raw_data(), w_desc_, W.raw_data(), conv_desc_,
                              static_cast<cudnnConvolutionFwdAlgo_t>(algo.algo),
                              WorkspaceBuffer(algo.workspace), algo.workspace, &zero, y_desc_, y));
  if (bias) C2_CUDNN_CHECK(cudnnAddTensor(h, &one, bias_desc_, bias, &one, y_desc_, y));
  return true;
}

CudnnConvGradientOp::CudnnConvGradientOp(const OperatorDef& def, Workspace* ws)
    : CudnnConvOpBase(def, ws), no_bias_(GetSingleArgument<int>("no_bias", 0) != 0) {
  CheckConvGradientOutputCount(*this, no_bias_);
}

bool CudnnConvGradientOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& W = Input(1);
  const Tensor& dY = Input(2);
  const cudnnDataType_t type = CudnnDataType(X, "X");
  CheckSameType(W, X, "filter");
  CheckSameType(dY, X, "dY");
  const ConvShape s = CheckConvShapes(args_, X.dims(), W.dims());
  const std::vector<int64_t> y_dims = s.g.OutputDims(s.M);
  CheckGradientOutputShape(dY, y_dims);
  if (!s.g.FitsSymmetricPads()) return RunFallback();
  Tensor* dW = Output(0);
  dW->ResizeLike(W);
  void* dw = dW->raw_mutable_data(X.meta());
  Tensor* dB = nullptr;
  void* db = nullptr;
  if (!no_bias_) {
    dB = Output(1);
    dB->Resize(s.M);
    db = dB->raw_mutable_data(X.meta());
  }
  const int dx_index = no_bias_ ? 1 : 2;
  Tensor* dX = nullptr;
  void* dx = nullptr;
  if (OutputSize() > dx_index) {
    dX = Output(dx_index);
    dX->ResizeLike(X);
    dx = dX->raw_mutable_data(X.meta());
  }
  if (dY.numel() == 0) {
    // No output positions: the sums are empty.
    cudaStream_t stream = context_.stream();
    C2_CUDA_CHECK(cudaMemsetAsync(dw, 0, dW->nbytes(), stream));
    if (db) C2_CUDA_CHECK(cudaMemsetAsync(db, 0, dB->nbytes(), stream));
    if (dx) C2_CUDA_CHECK(cudaMemsetAsync(dx, 0, dX->nbytes(), stream));
    return true;
  }
  SetDescriptors(s, type, X, W);
  const CudnnConvAlgo filter_algo = BackwardFilterAlgo(X.raw_data(), dY.raw_data(), dw);
  const CudnnConvAlgo data_algo =
      dx ? BackwardDataAlgo(W.raw_data(), dY.raw_data(), dx) : CudnnConvAlgo{};
  if (!filter_algo.supported || !data_algo.supported) return RunFallback();
  // One buffer for both passes, sized before either runs.
  void* ws = WorkspaceBuffer(std::max(filter_algo.workspace, data_algo.workspace));
  cudnnHandle_t h = context_.cudnn_handle();
  const float one = 1.f, zero = 0.f;
  C2_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, filter_algo.math));
  C2_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
      h, &one, x_desc_, X.raw_data(), y_desc_, dY.raw_data(), conv_desc_,
      static_cast<cudnnConvolutionBwdFilterAlgo_t>(filter_algo.algo), ws, filter_algo.workspace,
      &zero, w_desc_, dw));
  if (db)
    C2_CUDNN_CHECK(
        cudnnConvolutionBackwardBias(h, &one, y_desc_, dY.raw_data(), &zero, bias_desc_, db));
  if (dx) {
    C2_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, data_algo.math));
    C2_CUDNN_CHECK(cudnnConvolutionBackwardData(
        h, &one, w_desc_, W.raw_data(), y_desc_, dY.raw_data(), conv_desc_,
        static_cast<cudnnConvolutionBwdDataAlgo_t>(data_algo.algo), ws, data_algo.workspace, &zero,
        x_desc_, dx));
  }
  return true;
}

REGISTER_CUDA_OPERATOR(Conv, CudnnConvOp);
REGISTER_CUDA_OPERATOR(Conv_ENGINE_CUDNN, CudnnConvOp);
REGISTER_CUDA_OPERATOR(ConvGradient, CudnnConvGradientOp);
REGISTER_CUDA_OPERATOR(ConvGradient_ENGINE_CUDNN, CudnnConvGradientOp);

}  // namespace caffe2
