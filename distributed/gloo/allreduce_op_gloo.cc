// Allreduce (engine GLOO): sums k local buffers and the same buffers on every rank; every buffer
// ends with the total (ops spec §3.5). Inputs [common_world, X1..Xk], outputs [X1..Xk] in place;
// float or float16, all of one size. Algorithm: Gloo's halving-doubling.
#include <gloo/allreduce_halving_doubling.h>

#include "distributed/gloo/collective_op.h"

namespace caffe2 {
namespace {

class GlooAllreduceOp final : public GlooOpBase {
 public:
  using GlooOpBase::GlooOpBase;

 protected:
  void RunCollective() override {
    const BufferSignature sig =
        SignatureOf(1, InputSize() - 1, {DataType::FLOAT, DataType::FLOAT16});
    if (!AlreadyBuiltFor(sig)) {
      Keep(sig, DispatchGlooType(sig.dtype, [&](auto type) -> std::unique_ptr<gloo::Algorithm> {
             using T = decltype(type);
             return std::make_unique<gloo::AllreduceHalvingDoubling<T>>(
                 World().context, TypedPointers<T>(sig, sig.pointers.size()),
                 static_cast<int>(sig.count));
           }));
    }
    algorithm().run();
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Allreduce_ENGINE_GLOO, GlooAllreduceOp);

}  // namespace caffe2
