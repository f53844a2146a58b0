// Allreduce (engine GLOO): sums k local buffers and the same buffers on every rank; every buffer
// ends with the total (ops spec §3.5). Inputs [common_world, X1..Xk], outputs [X1..Xk] in place;
// float or float16, all of one size.
//
// Two Gloo algorithms, both built once on the first run over the buffers' fixed addresses, chosen
// by the size of a buffer (never by timing: every rank of a run and every run make the same
// choice, so results are reproducible):
// - below 1 MiB, halving-doubling: few steps, for latency-bound sizes;
// - from 1 MiB, the chunked ring: the buffer travels in chunks, each reduced and passed on while
//   the next is on the wire, so both directions of every link stay busy; buffers over 4 MiB run as
//   a sequence of rings over 4 MiB pieces (Gloo cuts a buffer into only 2 x ranks chunks, and the
//   pipeline's fill and drain grow with the chunk). On a 1 Gbit/s link it carries payload at the
//   link's rate (0.955 Gbit/s of 1500-byte frames), where halving-doubling, which waits for each
//   whole half before reducing it, reached 0.92 at 16 MiB.
//   (Gloo's newer segmented ring over unbound buffers, gloo::allreduce, stalls about 90 ms per call
//   on links with a 64 KiB MTU such as loopback in the Gloo Debian ships; the chunked ring does
//   not.)
// The argument `algorithm` ("auto", "ring_chunked", "halving_doubling") forces one.
#include <algorithm>

#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring_chunked.h>

#include "distributed/gloo/collective_op.h"

namespace caffe2 {
namespace {

constexpr int64_t kRingFromBytes = 1 << 20;
// Gloo's chunked ring cuts a buffer into 2 x ranks chunks; the pipeline's fill and drain grow with
// the chunk, so larger buffers run as a sequence of rings over pieces of at most this size.
constexpr int64_t kRingPieceBytes = 4 << 20;

// Runs several algorithms (one per piece of the buffers) one after another, as one.
class AlgorithmSequence final : public gloo::Algorithm {
 public:
  AlgorithmSequence(const std::shared_ptr<gloo::Context>& context,
                    std::vector<std::unique_ptr<gloo::Algorithm>> steps)
      : gloo::Algorithm(context), steps_(std::move(steps)) {}
  void run() override {
    for (auto& step : steps_) step->run();
  }

 private:
  std::vector<std::unique_ptr<gloo::Algorithm>> steps_;
};

// The chunked ring over every buffer, in pieces of at most kRingPieceBytes.
template <typename T>
std::unique_ptr<gloo::Algorithm> MakeRing(const std::shared_ptr<gloo::Context>& context,
                                          const std::vector<T*>& pointers, int64_t count) {
  const int64_t piece = std::max<int64_t>(1, kRingPieceBytes / static_cast<int64_t>(sizeof(T)));
  std::vector<std::unique_ptr<gloo::Algorithm>> steps;
  for (int64_t begin = 0; begin < count; begin += piece) {
    std::vector<T*> shifted;
    for (T* p : pointers) shifted.push_back(p + begin);
    steps.push_back(std::make_unique<gloo::AllreduceRingChunked<T>>(
        context, shifted, static_cast<int>(std::min(piece, count - begin))));
  }
  if (steps.size() == 1) return std::move(steps[0]);
  return std::make_unique<AlgorithmSequence>(context, std::move(steps));
}

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
             if (ring) return MakeRing<T>(World().context, pointers, sig.count);
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
