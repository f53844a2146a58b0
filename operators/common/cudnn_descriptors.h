// cuDNN descriptors for the cuDNN operators (the *_cudnn.cc files of operators/conv, norm and nn):
// RAII owners, the element type mapping and the layouts of image tensors and filters.
//
// - CudnnTensorDescriptor, CudnnFilterDescriptor, CudnnConvolutionDescriptor,
// CudnnPoolingDescriptor,
//   CudnnActivationDescriptor, CudnnLRNDescriptor own one cuDNN descriptor each (created in the
//   constructor, destroyed in the destructor; not copyable) and convert to the raw handle.
// - CudnnDataType: float -> CUDNN_DATA_FLOAT, float16 -> CUDNN_DATA_HALF; other types are an error.
//   The alpha/beta scaling factors of every cuDNN call are then float.
// - SetImageDescriptor describes N images of C channels with 1 to 3 spatial dims stored NCHW or
// NHWC
//   as the logical dims (N, C, spatial...) with that layout's strides. A 1-D image gets a trailing
//   spatial dim of 1, because cuDNN's convolution, pooling and normalization want 4 or 5 dims.
// - SetFilterDescriptor describes a filter (M, Cg, k...) (NCHW) or (M, k..., Cg) (NHWC), 1-D padded
//   the same way.
// - Every dim must fit cuDNN's int; CudnnDim names the value when it does not.
// Many of these legacy descriptors (filter, convolution, pooling, activation) are marked deprecated
// in cuDNN 9 in favour of the graph API; they are still present (9.19) and warn only when the build
// defines CUDNN_WARN_DEPRECATED.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <vector>

#include "core/cuda/cuda_check.h"
#include "core/tensor.h"

namespace caffe2 {

template <class T, cudnnStatus_t (*kCreate)(T*), cudnnStatus_t (*kDestroy)(T)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() { C2_CUDNN_CHECK(kCreate(&desc_)); }
  ~CudnnDescriptor() {
    if (desc_) kDestroy(desc_);
  }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  T get() const { return desc_; }
  operator T() const { return desc_; }

 private:
  T desc_ = nullptr;
};

using CudnnTensorDescriptor = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                              cudnnDestroyTensorDescriptor>;
using CudnnFilterDescriptor = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                              cudnnDestroyFilterDescriptor>;
using CudnnConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                    cudnnDestroyConvolutionDescriptor>;
using CudnnPoolingDescriptor =
    CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                    cudnnDestroyPoolingDescriptor>;
using CudnnActivationDescriptor =
    CudnnDescriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor,
                    cudnnDestroyActivationDescriptor>;
using CudnnLRNDescriptor =
    CudnnDescriptor<cudnnLRNDescriptor_t, cudnnCreateLRNDescriptor, cudnnDestroyLRNDescriptor>;

// The cuDNN type of a float or float16 tensor; `what` names the tensor in the error.
cudnnDataType_t CudnnDataType(const Tensor& t, const char* what);

// v as a cuDNN int; `what` names the quantity in the error.
int CudnnDim(int64_t v, const char* what);

// Image tensor (N, C, spatial...) stored NCHW (nhwc = false) or NHWC; spatial holds 1 to 3 dims.
void SetImageDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int64_t N, int64_t C,
                        const std::vector<int64_t>& spatial, bool nhwc);

// Filter with M output channels, Cg input channels per group and kernel dims `kernel` (1 to 3).
void SetFilterDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t type, int64_t M, int64_t Cg,
                         const std::vector<int64_t>& kernel, bool nhwc);

// Per-channel vector (1, C, 1, ...) with `nb_dims` dims in all (4 or 5), to pair with an image
// tensor.
void SetChannelDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int64_t C,
                          int nb_dims);

// Packed NCHW 4-d tensor (n, c, h, w).
void Set4dDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int64_t n, int64_t c,
                     int64_t h, int64_t w);

// The spatial dims padded with trailing 1s to at least two (the dims cuDNN is given).
std::vector<int64_t> CudnnSpatial(const std::vector<int64_t>& spatial);

}  // namespace caffe2
