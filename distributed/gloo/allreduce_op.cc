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
      if (sig.dtype == DataType::FLOAT) {
        Keep(sig, Make<float>(sig));
      } else {
        Keep(sig, Make<gloo::float16>(sig));
      }
    }
    algorithm().run();
  }

 private:
  template <typename T>
  std::unique_ptr<gloo::Algorithm> Make(const BufferSignature& sig) {
    std::vector<T*> ptrs;
    for (const void* p : sig.pointers) ptrs.push_back(static_cast<T*>(const_cast<void*>(p)));
    return std::make_unique<gloo::AllreduceHalvingDoubling<T>>(World().context, ptrs,
                                                               static_cast<int>(sig.count));
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Allreduce_ENGINE_GLOO, GlooAllreduceOp);

}  // namespace caffe2
