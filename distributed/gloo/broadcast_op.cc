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
        1, InputSize() - 1,
        {DataType::FLOAT, DataType::FLOAT16, DataType::INT32, DataType::INT64});
    C2_ENFORCE(root_ >= 0 && root_ < World().size(), "root ", root_, " is not a rank of the ",
               World().size(), "-rank common world");
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
    std::vector<T*> ptrs;
    for (const void* p : sig.pointers) ptrs.push_back(static_cast<T*>(const_cast<void*>(p)));
    return std::make_unique<gloo::BroadcastOneToAll<T>>(World().context, ptrs,
                                                        static_cast<size_t>(sig.count), root_, 0);
  }

  int root_;
};

}  // namespace

REGISTER_CPU_OPERATOR(Broadcast_ENGINE_GLOO, GlooBroadcastOp);

}  // namespace caffe2
