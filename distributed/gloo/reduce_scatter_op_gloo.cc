// ReduceScatter (engine GLOO): inputs [common_world, X1..Xk, recv_counts], outputs [X1..Xk,
// recv_counts] in place (ops spec §3.5). recv_counts is an int32 vector with one element count per
// rank (summing to the buffer size); rank r ends with its reduced chunk at the start of each
// buffer. float or float16; Gloo's halving-doubling.
#include <gloo/reduce_scatter.h>

#include "distributed/gloo/collective_op.h"

namespace caffe2 {
namespace {

class GlooReduceScatterOp final : public GlooOpBase {
 public:
  using GlooOpBase::GlooOpBase;

 protected:
  void RunCollective() override {
    const int k = InputSize() - 2;
    C2_ENFORCE(k >= 1, "needs [common_world, X1..Xk, recv_counts] with k >= 1, got ", InputSize(),
               " inputs");
    BufferSignature sig = SignatureOf(1, k, {DataType::FLOAT, DataType::FLOAT16});
    const Tensor& counts = Input(InputSize() - 1);
    C2_ENFORCE(counts.IsType<int32_t>() && counts.numel() == World().size(), "recv_counts ('",
               debug_def().input(InputSize() - 1),
               "') must be an int32 vector with one count per "
               "rank (",
               World().size(), "), got ", counts.DebugString());
    std::vector<int> recv(counts.data<int32_t>(), counts.data<int32_t>() + counts.numel());
    int64_t total = 0;
    for (int c : recv) total += c;
    C2_ENFORCE(total == sig.count, "recv_counts sum to ", total, " but the buffers hold ",
               sig.count, " elements");
    sig.pointers.push_back(counts.raw_data());
    if (!AlreadyBuiltFor(sig)) {
      Keep(sig, DispatchGlooType(sig.dtype, [&](auto type) -> std::unique_ptr<gloo::Algorithm> {
             using T = decltype(type);
             return std::make_unique<gloo::ReduceScatterHalvingDoubling<T>>(
                 World().context, TypedPointers<T>(sig, k), static_cast<int>(sig.count), recv);
           }));
    }
    algorithm().run();
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(ReduceScatter_ENGINE_GLOO, GlooReduceScatterOp);

}  // namespace caffe2
