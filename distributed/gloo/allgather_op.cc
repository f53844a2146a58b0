// Allgather (engine GLOO): inputs [common_world, X1..Xk] (same size n and dtype), output Y, 1-D of
// length k * n * world size, rank-major then input order (ops spec §3.5). float, float16, int32,
// int64. Y is allocated on the first run and must not move afterwards.
#include <gloo/allgather_ring.h>

#include "distributed/gloo/collective_op.h"

namespace caffe2 {
namespace {

class GlooAllgatherOp final : public GlooOpBase {
 public:
  using GlooOpBase::GlooOpBase;

 protected:
  void RunCollective() override {
    const int k = InputSize() - 1;
    BufferSignature sig = SignatureOf(
        1, k, {DataType::FLOAT, DataType::FLOAT16, DataType::INT32, DataType::INT64});
    Tensor* out = OutputBlob(0)->GetMutableTensor(Device{});
    out->Resize(std::vector<int64_t>{sig.count * k * World().size()});
    void* out_ptr = nullptr;
    switch (sig.dtype) {
      case DataType::FLOAT: out_ptr = out->mutable_data<float>(); break;
      case DataType::FLOAT16: out_ptr = out->mutable_data<float16>(); break;
      case DataType::INT32: out_ptr = out->mutable_data<int32_t>(); break;
      default: out_ptr = out->mutable_data<int64_t>(); break;
    }
    sig.pointers.push_back(out_ptr);
    if (!AlreadyBuiltFor(sig)) {
      switch (sig.dtype) {
        case DataType::FLOAT: Keep(sig, Make<float>(sig)); break;
        case DataType::FLOAT16: Keep(sig, Make<gloo::float16>(sig)); break;
        case DataType::INT32: Keep(sig, Make<int32_t>(sig)); break;
        default: Keep(sig, Make<int64_t>(sig)); break;
      }
    }
    algorithm().run();
  }

 private:
  template <typename T>
  std::unique_ptr<gloo::Algorithm> Make(const BufferSignature& sig) {
    std::vector<const T*> in;
    for (size_t i = 0; i + 1 < sig.pointers.size(); ++i) {
      in.push_back(static_cast<const T*>(sig.pointers[i]));
    }
    T* out = static_cast<T*>(const_cast<void*>(sig.pointers.back()));
    return std::make_unique<gloo::AllgatherRing<T>>(World().context, in, out,
                                                    static_cast<int>(sig.count));
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Allgather_ENGINE_GLOO, GlooAllgatherOp);

}  // namespace caffe2
