#include "distributed/gloo/collective_op.h"

#include <sstream>

#include <gloo/algorithm.h>
#include <gloo/common/error.h>

#include "core/workspace.h"

namespace caffe2 {

std::string BufferSignature::Describe() const {
  std::ostringstream os;
  os << pointers.size() << " buffer(s) of " << count << " " << DataTypeName(dtype) << " element(s)";
  return os.str();
}

GlooOpBase::GlooOpBase(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), CollectiveOp(*this, ws) {}

std::exception_ptr GlooOpBase::WireFailure(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const gloo::IoException& e) {
    return std::make_exception_ptr(CollectiveIoError(ExplainFailure(World(), What(), e.what())));
  } catch (const CollectiveIoError&) {
    return error;
  } catch (...) {
    return nullptr;
  }
}

CommonWorldPtr GlooOpBase::WorldPtr() {
  const Blob& blob = InputBlob(0);
  C2_ENFORCE(blob.IsType<CommonWorldPtr>(), "input 0 ('", debug_def().input(0),
             "') must be a common world (from CreateCommonWorld or CloneCommonWorld) but holds ",
             blob.TypeName());
  const CommonWorldPtr& world = blob.Get<CommonWorldPtr>();
  C2_ENFORCE(world && world->context, "input 0 ('", debug_def().input(0),
             "') holds a destroyed common world");
  return world;
}

CommonWorld& GlooOpBase::World() { return *WorldPtr(); }

BufferSignature GlooOpBase::SignatureOf(int first, int n, const std::vector<DataType>& allowed) {
  BufferSignature sig;
  sig.world = WorldPtr().get();
  for (int i = first; i < first + n; ++i) {
    const Tensor& t = Input(i);
    C2_ENFORCE(t.device().type == kCPU, "input ", i, " ('", debug_def().input(i),
               "') is not a CPU tensor; the Gloo ops of this build take host memory");
    if (i == first) {
      sig.count = t.numel();
      sig.dtype = t.dtype();
      bool ok = false;
      for (DataType d : allowed) ok = ok || d == sig.dtype;
      std::string names;
      for (DataType d : allowed) names += (names.empty() ? "" : ", ") + DataTypeName(d);
      C2_ENFORCE(ok, "input ", i, " ('", debug_def().input(i), "') has dtype ",
                 DataTypeName(sig.dtype), "; supported: ", names);
    }
    C2_ENFORCE(t.numel() == sig.count && t.dtype() == sig.dtype,
               "every buffer must have the same "
               "size and dtype: input ",
               first, " ('", debug_def().input(first), "') is ", sig.count, " x ",
               DataTypeName(sig.dtype), " but input ", i, " ('", debug_def().input(i), "') is ",
               t.numel(), " x ", DataTypeName(t.dtype()));
    C2_ENFORCE(t.has_storage() || t.numel() == 0, "input ", i, " ('", debug_def().input(i),
               "') has no data");
    sig.pointers.push_back(t.raw_data());
  }
  return sig;
}

bool GlooOpBase::AlreadyBuiltFor(const BufferSignature& signature) {
  if (!algorithm_) return false;
  C2_ENFORCE(signature == built_for_,
             "Inputs/outputs have changed since the first run: it was "
             "built for ",
             built_for_.Describe(), " and now sees ", signature.Describe(),
             " (or the buffers or the common world moved). Collective buffers must keep their "
             "size and memory between iterations");
  return true;
}

void GlooOpBase::Keep(const BufferSignature& signature,
                      std::unique_ptr<gloo::Algorithm> algorithm) {
  built_for_ = signature;
  algorithm_ = std::move(algorithm);
}

}  // namespace caffe2
