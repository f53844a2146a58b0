// Barrier (engine GLOO): returns once every rank of the common world has reached it (all-to-one
// against rank 0; ops spec §3.5). Inputs [common_world], no outputs.
#include <gloo/barrier_all_to_one.h>

#include "distributed/gloo/collective_op.h"

namespace caffe2 {
namespace {

class GlooBarrierOp final : public GlooOpBase {
 public:
  using GlooOpBase::GlooOpBase;

 protected:
  void RunCollective() override {
    BufferSignature sig;
    sig.world = WorldPtr().get();
    if (!AlreadyBuiltFor(sig)) {
      Keep(sig, std::make_unique<gloo::BarrierAllToOne>(World().context, 0));
    }
    algorithm().run();
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Barrier_ENGINE_GLOO, GlooBarrierOp);

}  // namespace caffe2
