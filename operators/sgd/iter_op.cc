// Iteration counters (spec ops §1.2.14). The counter is always a CPU int64 tensor of one element,
// also when the op runs on a GPU. A one-element int32 counter (upstream's toy regression example
// fills ITER as INT32) is widened to int64, keeping its value, on the first run; any other type or
// size is an error that says how to fill it.
//   Iter:        [] or [iter] -> [iter] (in place). Starts at 0 when the blob is new; +1 per run.
//   CreateMutex: [] -> [mutex], a std::unique_ptr<std::mutex> blob.
//   AtomicIter:  [mutex, iter] -> [iter] (in place 1->0), +1 per run under the mutex.
#include <limits>
#include <memory>
#include <mutex>

#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

void IncrementIter(Blob* blob) {
  C2_ENFORCE(blob->IsType<Tensor>(), "the counter blob holds ", blob->TypeName(),
             ", not an int64 tensor");
  Tensor* t = blob->GetMutable<Tensor>();
  if (t->device().type == kCPU && t->IsType<int32_t>() && t->numel() == 1) {
    const int64_t widened = *t->data<int32_t>();
    t->Resize(1);
    *t->mutable_data<int64_t>() = widened;  // the tensor now holds int64
  }
  C2_ENFORCE(t->device().type == kCPU && t->IsType<int64_t>() && t->numel() == 1,
             "the counter must be a one-element int64 CPU tensor (fill it with "
             "ConstantFill(shape=[1], value=0, dtype=INT64), or let Iter create it), got ",
             t->DebugString());
  int64_t* value = t->mutable_data<int64_t>();
  C2_ENFORCE(*value >= 0, "the counter is negative (", *value, ")");
  C2_ENFORCE(*value < std::numeric_limits<int64_t>::max(), "the counter would overflow");
  ++*value;
}

class IterOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    Blob* blob = OutputBlob(0);
    if (InputSize() == 0 && !blob->IsType<Tensor>()) {
      Tensor* t = blob->GetMutableTensor(Device{kCPU, 0});
      t->Resize(1);
      *t->mutable_data<int64_t>() = 0;
    }
    IncrementIter(blob);
    return true;
  }
};

class CreateMutexOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    *OutputObject<std::unique_ptr<std::mutex>>(0) = std::make_unique<std::mutex>();
    return true;
  }
};

class AtomicIterOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const auto& mutex = InputObject<std::unique_ptr<std::mutex>>(0);
    C2_ENFORCE(mutex != nullptr, "the mutex blob '", debug_def().input(0), "' holds no mutex");
    std::lock_guard<std::mutex> lock(*mutex);
    IncrementIter(OutputBlob(0));
    return true;
  }
};

std::vector<TensorShape> CounterShape(const OperatorDef&, const std::vector<TensorShape>&) {
  TensorShape s;
  s.add_dims(1);
  s.set_data_type(TensorProto::INT64);
  return {s};
}

}  // namespace

REGISTER_CPU_OPERATOR(Iter, IterOp);
// The counter stays on the host for a GPU op too (spec), so the same class serves CUDA.
REGISTER_CUDA_OPERATOR(Iter, IterOp);
OPERATOR_SCHEMA(Iter)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .EnforceInplace({{0, 0}})
    .TensorInference(CounterShape)
    .SetDoc("Increments an int64 counter by one on every run.");
REGISTER_GRADIENT(Iter, NoGradient);

REGISTER_CPU_OPERATOR(CreateMutex, CreateMutexOp);
OPERATOR_SCHEMA(CreateMutex).NumInputs(0).NumOutputs(1).SetDoc("Creates a mutex blob.");
REGISTER_GRADIENT(CreateMutex, NoGradient);

REGISTER_CPU_OPERATOR(AtomicIter, AtomicIterOp);
REGISTER_CUDA_OPERATOR(AtomicIter, AtomicIterOp);
OPERATOR_SCHEMA(AtomicIter)
    .NumInputs(2)
    .NumOutputs(1)
    .EnforceInplace({{1, 0}})
    .TensorInference(CounterShape)
    .SetDoc("Increments an int64 counter by one under a mutex.");
REGISTER_GRADIENT(AtomicIter, NoGradient);

}  // namespace caffe2
