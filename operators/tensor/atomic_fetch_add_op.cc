// AtomicFetchAdd: [mutex (CreateMutex), a, b (one-element int32)] -> [sum, fetched] (0-d int32):
// under the mutex, fetched = a and sum = a + b (wrapping as int32 arithmetic does). sum is usually
// a itself (in place 1 -> 0), which makes a a counter that several nets can advance.
// AtomicFetchAdd64: the same for int64 (upstream's second name; here one kernel serves both
// types). CPU only: the mutex is a host object. No gradient.
#include <mutex>

#include "core/gradient.h"
#include "core/op_alias.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

class AtomicFetchAddOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const auto& mutex = InputObject<std::unique_ptr<std::mutex>>(0);
    C2_ENFORCE(mutex != nullptr, "the mutex blob '", debug_def().input(0), "' holds no mutex");
    std::lock_guard<std::mutex> lock(*mutex);
    const Tensor& a = Input(1);
    const Tensor& b = Input(2);
    C2_ENFORCE(a.numel() == 1 && b.numel() == 1 && a.meta() == b.meta() &&
                   (a.IsType<int32_t>() || a.IsType<int64_t>()),
               "a and b must be one-element tensors of one type, int32 or int64, got ",
               a.DebugString(), " and ", b.DebugString());
    if (a.IsType<int32_t>()) {
      FetchAdd<int32_t, uint32_t>(a, b);
    } else {
      FetchAdd<int64_t, uint64_t>(a, b);
    }
    return true;
  }

 private:
  // U: the unsigned twin of T, for the wrap-around without undefined behaviour.
  template <class T, class U>
  void FetchAdd(const Tensor& a, const Tensor& b) {
    const T old = a.data<T>()[0];
    const T sum = static_cast<T>(static_cast<U>(old) + static_cast<U>(b.data<T>()[0]));
    Tensor* out_sum = Output(0);
    Tensor* fetched = Output(1);
    out_sum->Resize(std::vector<int64_t>{});
    fetched->Resize(std::vector<int64_t>{});
    out_sum->mutable_data<T>()[0] = sum;
    fetched->mutable_data<T>()[0] = old;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(AtomicFetchAdd, AtomicFetchAddOp);
OPERATOR_SCHEMA(AtomicFetchAdd)
    .NumInputs(3)
    .NumOutputs(2)
    .AllowInplace({{1, 0}})
    .Input(0, "mutex_ptr", "a mutex blob made by CreateMutex")
    .Input(1, "mut_value", "one-element int32 (int64) value to add to")
    .Input(2, "increment", "one-element value of the same type")
    .Output(0, "mut_value", "mut_value + increment, usually mut_value itself")
    .Output(1, "fetched_value", "mut_value before the addition")
    .SetDoc("Atomically adds increment to mut_value and returns the value before.");
REGISTER_GRADIENT(AtomicFetchAdd, NoGradient);
REGISTER_OPERATOR_ALIAS(AtomicFetchAdd64, AtomicFetchAdd);

}  // namespace caffe2
