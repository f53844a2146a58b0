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
    BufferSignature sig =
        SignatureOf(1, k, {DataType::FLOAT, DataType::FLOAT16, DataType::INT32, DataType::INT64});
    Tensor* out = OutputBlob(0)->GetMutableTensor(Device{});
    out->Resize(std::vector<int64_t>{sig.count * k * World().size()});
    sig.pointers.push_back(out->raw_mutable_data(Input(1).meta()));
    if (!AlreadyBuiltFor(sig)) {
      Keep(sig, DispatchGlooType(sig.dtype, [&](auto type) -> std::unique_ptr<gloo::Algorithm> {
             using T = decltype(type);
             std::vector<T*> in = TypedPointers<T>(sig, k);
             return std::make_unique<gloo::AllgatherRing<T>>(
                 World().context, std::vector<const T*>(in.begin(), in.end()),
                 TypedPointers<T>(sig, k + 1).back(), static_cast<int>(sig.count));
           }));
    }
    algorithm().run();
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Allgather_ENGINE_GLOO, GlooAllgatherOp);

}  // namespace caffe2
