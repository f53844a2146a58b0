// Broadcast (engine GLOO): the root rank's FIRST buffer is copied into every buffer on every rank
// (ops spec §3.5). Inputs [common_world, X1..Xk], outputs [X1..Xk] in place; float, float16, int32
// or int64. Argument root (int, default 0) is a rank.
#include <gloo/broadcast_one_to_all.h>

#include "distributed/gloo/collective_op.h"

namespace caffe2 {
namespace {

class GlooBroadcastOp final : public GlooOpBase {
 public:
  GlooBroadcastOp(const OperatorDef& def, Workspace* ws)
      : GlooOpBase(def, ws), root_(GetSingleArgument<int>("root", 0)) {}

 protected:
  void RunCollective() override {
    const BufferSignature sig = SignatureOf(
        1, InputSize() - 1, {DataType::FLOAT, DataType::FLOAT16, DataType::INT32, DataType::INT64});
    C2_ENFORCE(root_ >= 0 && root_ < World().size(), "root ", root_, " is not a rank of the ",
               World().size(), "-rank common world");
    if (!AlreadyBuiltFor(sig)) {
      Keep(sig, DispatchGlooType(sig.dtype, [&](auto type) -> std::unique_ptr<gloo::Algorithm> {
             using T = decltype(type);
             return std::make_unique<gloo::BroadcastOneToAll<T>>(
                 World().context, TypedPointers<T>(sig, sig.pointers.size()),
                 static_cast<size_t>(sig.count), root_, 0);
           }));
    }
    algorithm().run();
  }

 private:
  int root_;
};

}  // namespace

REGISTER_CPU_OPERATOR(Broadcast_ENGINE_GLOO, GlooBroadcastOp);

}  // namespace caffe2
