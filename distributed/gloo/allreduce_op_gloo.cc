// Allreduce (engine GLOO): sums k local buffers and the same buffers on every rank; every buffer
// ends with the total (ops spec §3.5). Inputs [common_world, X1..Xk], outputs [X1..Xk] in place;
// float or float16, all of one size.
//
// Two Gloo algorithms, both built once on the first run over the buffers' fixed addresses, chosen
// by the size of a buffer (never by timing: every rank of a run and every run make the same
// choice, so results are reproducible):
// - below 1 MiB, halving-doubling: few steps, for latency-bound sizes;
// - from 1 MiB, the chunked ring: the buffer travels in chunks, each reduced and passed on while
//   the next is on the wire, so both directions of every link stay busy. On a 1 Gbit/s link it
//   carries payload at the link's rate (0.955 Gbit/s of 1500-byte frames), where halving-doubling,
//   which waits for each whole half before reducing it, reached 0.92 at 16 MiB.
//   (Gloo's newer segmented ring over unbound buffers, gloo::allreduce, stalls about 90 ms per call
//   on links with a 64 KiB MTU such as loopback in the Gloo Debian ships; the chunked ring does
//   not.)
// The argument `algorithm` ("auto", "ring_chunked", "halving_doubling") forces one.
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring_chunked.h>

#include "distributed/gloo/collective_op.h"

namespace caffe2 {
namespace {

constexpr int64_t kRingFromBytes = 1 << 20;

class GlooAllreduceOp final : public GlooOpBase {
 public:
  GlooAllreduceOp(const OperatorDef& def, Workspace* ws)
      : GlooOpBase(def, ws), algorithm_(GetSingleArgument<std::string>("algorithm", "auto")) {
    C2_ENFORCE(
        algorithm_ == "auto" || algorithm_ == "ring_chunked" || algorithm_ == "halving_doubling",
        "Allreduce: argument 'algorithm' must be \"auto\", \"ring_chunked\" or "
        "\"halving_doubling\", got \"",
        algorithm_, "\"");
  }

 protected:
  void RunCollective() override {
    const BufferSignature sig =
        SignatureOf(1, InputSize() - 1, {DataType::FLOAT, DataType::FLOAT16});
    if (!AlreadyBuiltFor(sig)) {
      const bool ring = algorithm_ == "ring_chunked" ||
                        (algorithm_ == "auto" &&
                         sig.count * static_cast<int64_t>(Input(1).itemsize()) >= kRingFromBytes);
      Keep(sig, DispatchGlooType(sig.dtype, [&](auto type) -> std::unique_ptr<gloo::Algorithm> {
             using T = decltype(type);
             std::vector<T*> pointers = TypedPointers<T>(sig, sig.pointers.size());
             const int count = static_cast<int>(sig.count);
             if (ring) {
               return std::make_unique<gloo::AllreduceRingChunked<T>>(World().context, pointers,
                                                                      count);
             }
             return std::make_unique<gloo::AllreduceHalvingDoubling<T>>(World().context, pointers,
                                                                        count);
           }));
    }
    algorithm().run();
  }

 private:
  std::string algorithm_;
};

}  // namespace

REGISTER_CPU_OPERATOR(Allreduce_ENGINE_GLOO, GlooAllreduceOp);

}  // namespace caffe2
