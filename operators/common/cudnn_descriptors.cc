#include "operators/common/cudnn_descriptors.h"

#include <algorithm>
#include <limits>

namespace caffe2 {

cudnnDataType_t CudnnDataType(const Tensor& t, const char* what) {
  if (t.IsType<float>()) return CUDNN_DATA_FLOAT;
  if (t.IsType<float16>()) return CUDNN_DATA_HALF;
  C2_THROW(what, " must be a float or float16 tensor for cuDNN, got ", t.meta().name, " ",
           Tensor::DimsString(t.dims()));
}

int CudnnDim(int64_t v, const char* what) {
  C2_ENFORCE(v >= 0 && v <= std::numeric_limits<int>::max(), what, " = ", v,
             " does not fit cuDNN's 32-bit int");
  return static_cast<int>(v);
}

std::vector<int64_t> CudnnSpatial(const std::vector<int64_t>& spatial) {
  std::vector<int64_t> s = spatial;
  while (s.size() < 2) s.push_back(1);
  return s;
}

void SetImageDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int64_t N, int64_t C,
                        const std::vector<int64_t>& spatial, bool nhwc) {
  const std::vector<int64_t> sp = CudnnSpatial(spatial);
  const int n = static_cast<int>(sp.size()) + 2;
  std::vector<int64_t> dims{N, C};
  dims.insert(dims.end(), sp.begin(), sp.end());
  // Strides of the logical dims (N, C, s0, s1, ...): NCHW is packed in that order; NHWC stores the
  // channel innermost, then the spatial dims, then the image.
  std::vector<int64_t> strides(n);
  int64_t inner = nhwc ? C : 1;
  for (int i = n - 1; i >= 2; --i) {
    strides[i] = inner;
    inner *= dims[i];
  }
  strides[1] = nhwc ? 1 : inner;
  if (!nhwc) inner *= C;
  strides[0] = inner;
  std::vector<int> d(n), s(n);
  for (int i = 0; i < n; ++i) {
    d[i] = CudnnDim(dims[i], "a tensor dim");
    // cuDNN rejects a stride of 0, which an empty dim would give its neighbours.
    s[i] = CudnnDim(std::max<int64_t>(strides[i], 1), "a tensor stride");
  }
  C2_CUDNN_CHECK(cudnnSetTensorNdDescriptor(desc, type, n, d.data(), s.data()));
}

void SetFilterDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t type, int64_t M, int64_t Cg,
                         const std::vector<int64_t>& kernel, bool nhwc) {
  const std::vector<int64_t> k = CudnnSpatial(kernel);
  std::vector<int> d{CudnnDim(M, "filter output channels"), CudnnDim(Cg, "filter input channels")};
  for (int64_t v : k) d.push_back(CudnnDim(v, "kernel size"));
  C2_CUDNN_CHECK(cudnnSetFilterNdDescriptor(desc, type,
                                            nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                            static_cast<int>(d.size()), d.data()));
}

void SetChannelDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int64_t C,
                          int nb_dims) {
  std::vector<int> d(nb_dims, 1), s(nb_dims, 1);
  d[1] = CudnnDim(C, "channels");
  s[0] = d[1];
  C2_CUDNN_CHECK(cudnnSetTensorNdDescriptor(desc, type, nb_dims, d.data(), s.data()));
}

void Set4dDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int64_t n, int64_t c,
                     int64_t h, int64_t w) {
  C2_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, type, CudnnDim(n, "dim 0"),
                                            CudnnDim(c, "dim 1"), CudnnDim(h, "dim 2"),
                                            CudnnDim(w, "dim 3")));
}

}  // namespace caffe2
