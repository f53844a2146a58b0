// LearningRate: [iter] -> [lr], lr = base_lr * f(iter) as a 0-d float tensor (spec ops §1.2.14).
// iter is the one-element int64 CPU counter of Iter/AtomicIter. Policies and their arguments:
//   fixed                                   1
//   step      stepsize, gamma                gamma ^ floor(iter / stepsize)
//   exp       gamma                          gamma ^ iter
//   inv       gamma, power                   (1 + gamma * iter) ^ -power
//   poly      power, max_iter                (1 - iter / max_iter) ^ power
//   linearWarmup    start_multiplier, num_iter   ramps linearly from start_multiplier to 1
//   constantWarmup  multiplier, num_iter         multiplier before num_iter, then 1
//   alter     active_first, active_period, inactive_period   1/0 square wave
//   hill      num_iter, start_multiplier, gamma, power, end_multiplier
//             linearWarmup before num_iter, then max(end_multiplier, inv(iter - num_iter))
//   multistep stepsizes (ints, ascending), gamma
//             gamma ^ (number of stepsizes s with s <= iter)
//   composite sub_policy_num_iters (ints, one count per sub-policy)
//             Runs sub-policies one after the other: sub-policy i is active for
//             sub_policy_num_iters[i] iterations (the last one stays active afterwards)
//             and sees the iteration counted from its own start. Its arguments are the
//             ones above with the prefix "sub_policy_<i>_": sub_policy_0_policy="step",
//             sub_policy_0_stepsize=10, sub_policy_0_gamma=0.5, ...; the optional
//             sub_policy_<i>_lr_scale (float, 1.0) multiplies its value. A sub-policy may
//             not itself be composite.
// (multistep and composite are not in Caffe2 0.8.2; they follow the later upstream design.)
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

class LearningRateOp final : public Operator<CPUContext> {
 public:
  LearningRateOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), base_lr_(GetSingleArgument<float>("base_lr", 0.f)) {
    C2_ENFORCE(HasArgument("base_lr"), "missing required argument 'base_lr'");
    policy_ = MakePolicy(GetSingleArgument<std::string>("policy", ""), "");
  }

  bool RunOnDevice() override {
    const Tensor& it = Input(0);
    C2_ENFORCE(it.device().type == kCPU && it.IsType<int64_t>() && it.numel() == 1,
               "the iteration must be a one-element int64 CPU tensor, got ", it.DebugString());
    const int64_t iter = it.data<int64_t>()[0];
    Tensor* lr = Output(0);
    lr->Resize(std::vector<int64_t>{});
    lr->mutable_data<float>()[0] = static_cast<float>(base_lr_ * policy_(iter));
    return true;
  }

 private:
  // Argument `name` of the policy whose arguments carry `prefix`.
  template <class T>
  T Arg(const std::string& prefix, const std::string& name, const T& default_value) const {
    return GetSingleArgument<T>(prefix + name, default_value);
  }

  std::function<double(int64_t)> MakePolicy(const std::string& policy, const std::string& prefix) {
    const double gamma = Arg<float>(prefix, "gamma", 0.f);
    const double power = Arg<float>(prefix, "power", 0.f);
    if (policy == "fixed") return [](int64_t) { return 1.0; };
    if (policy == "step") {
      const int64_t stepsize = Arg<int64_t>(prefix, "stepsize", 0);
      C2_ENFORCE(stepsize > 0, "policy 'step' needs a positive 'stepsize', got ", stepsize);
      return [gamma, stepsize](int64_t i) {
        return std::pow(gamma, static_cast<double>(i / stepsize));
      };
    }
    if (policy == "exp")
      return [gamma](int64_t i) { return std::pow(gamma, static_cast<double>(i)); };
    if (policy == "inv") {
      return [gamma, power](int64_t i) { return std::pow(1.0 + gamma * i, -power); };
    }
    if (policy == "poly") {
      const int64_t max_iter = Arg<int64_t>(prefix, "max_iter", -1);
      C2_ENFORCE(max_iter > 0, "policy 'poly' needs a positive 'max_iter', got ", max_iter);
      return [power, max_iter](int64_t i) {
        return std::pow(std::max(0.0, 1.0 - static_cast<double>(i) / max_iter), power);
      };
    }
    if (policy == "linearWarmup" || policy == "hill") {
      const double start = Arg<float>(prefix, "start_multiplier", 0.f);
      const int64_t num_iter = Arg<int64_t>(prefix, "num_iter", 0);
      auto warmup = [start, num_iter](int64_t i) {
        return i >= num_iter ? 1.0 : start + (1.0 - start) * static_cast<double>(i) / num_iter;
      };
      if (policy == "linearWarmup") return warmup;
      const double end = Arg<float>(prefix, "end_multiplier", 0.f);
      return [warmup, num_iter, gamma, power, end](int64_t i) {
        if (i < num_iter) return warmup(i);
        return std::max(end, std::pow(1.0 + gamma * (i - num_iter), -power));
      };
    }
    if (policy == "constantWarmup") {
      const double multiplier = Arg<float>(prefix, "multiplier", 0.5f);
      const int64_t num_iter = Arg<int64_t>(prefix, "num_iter", 0);
      return [multiplier, num_iter](int64_t i) { return i >= num_iter ? 1.0 : multiplier; };
    }
    if (policy == "alter") {
      const bool active_first = Arg<bool>(prefix, "active_first", true);
      const int64_t active = Arg<int64_t>(prefix, "active_period", -1);
      const int64_t inactive = Arg<int64_t>(prefix, "inactive_period", -1);
      C2_ENFORCE(active > 0 && inactive > 0, "policy 'alter' needs positive 'active_period' and ",
                 "'inactive_period', got ", active, " and ", inactive);
      return [active_first, active, inactive](int64_t i) {
        const bool first_phase = i % (active + inactive) < (active_first ? active : inactive);
        return (first_phase == active_first) ? 1.0 : 0.0;
      };
    }
    if (policy == "multistep") {
      const std::vector<int64_t> steps = GetRepeatedArgument<int64_t>(prefix + "stepsizes");
      C2_ENFORCE(!steps.empty(), "policy 'multistep' needs a non-empty '", prefix, "stepsizes'");
      for (size_t i = 1; i < steps.size(); ++i) {
        C2_ENFORCE(steps[i] > steps[i - 1], "'", prefix, "stepsizes' must be increasing, got ",
                   steps[i - 1], " before ", steps[i]);
      }
      return [gamma, steps](int64_t i) {
        int64_t passed = 0;
        while (passed < static_cast<int64_t>(steps.size()) && steps[passed] <= i) ++passed;
        return std::pow(gamma, static_cast<double>(passed));
      };
    }
    if (policy == "composite") {
      C2_ENFORCE(prefix.empty(), "a composite policy cannot contain another composite policy (",
                 prefix, "policy)");
      return MakeComposite();
    }
    C2_THROW("unknown learning rate policy '", policy,
             "' (fixed, step, exp, inv, poly, linearWarmup, constantWarmup, alter, hill, ",
             "multistep, composite)");
  }

  std::function<double(int64_t)> MakeComposite() {
    const std::vector<int64_t> counts = GetRepeatedArgument<int64_t>("sub_policy_num_iters");
    C2_ENFORCE(!counts.empty(), "policy 'composite' needs 'sub_policy_num_iters'");
    struct Stage {
      int64_t start;
      double scale;
      std::function<double(int64_t)> f;
    };
    std::vector<Stage> stages;
    int64_t start = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      const std::string prefix = "sub_policy_" + std::to_string(i) + "_";
      C2_ENFORCE(counts[i] > 0, "sub_policy_num_iters[", i, "] must be positive, got ", counts[i]);
      const std::string name = GetSingleArgument<std::string>(prefix + "policy", "");
      C2_ENFORCE(!name.empty(), "composite policy: missing '", prefix, "policy'");
      stages.push_back({start, Arg<float>(prefix, "lr_scale", 1.f), MakePolicy(name, prefix)});
      start += counts[i];
    }
    return [stages](int64_t iter) {
      size_t k = 0;
      while (k + 1 < stages.size() && iter >= stages[k + 1].start) ++k;
      return stages[k].scale * stages[k].f(iter - stages[k].start);
    };
  }

  double base_lr_;
  std::function<double(int64_t)> policy_;
};

}  // namespace

REGISTER_CPU_OPERATOR(LearningRate, LearningRateOp);
REGISTER_GPU_FALLBACK(LearningRate);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(LearningRate)
    .NumInputs(1)
    .NumOutputs(1)
    .ScalarType(TensorProto::FLOAT)
    .Arg("base_lr", "The base learning rate", true)
    .Arg("policy", "How the rate changes with the iteration", true)
    .Arg("gamma", "(float, default 0) policies step, exp, inv, hill, multistep: the decay base")
    .Arg("power", "(float, default 0) policies inv, poly, hill: the decay exponent")
    .Arg("stepsize", "(int, default 0) policy step: iterations per decay; must be positive")
    .Arg("max_iter", "(int, default -1) policy poly: the iteration where the rate reaches 0")
    .Arg("start_multiplier",
         "(float, default 0) policies linearWarmup, hill: the multiplier at iteration 0")
    .Arg("num_iter",
         "(int, default 0) policies linearWarmup, constantWarmup, hill: the warmup's length")
    .Arg("end_multiplier", "(float, default 0) policy hill: the multiplier's floor after warmup")
    .Arg("multiplier", "(float, default 0.5) policy constantWarmup: the multiplier during warmup")
    .Arg("active_first", "(bool, default 1) policy alter: start with an active period")
    .Arg("active_period", "(int, default -1) policy alter: iterations at rate 1; positive")
    .Arg("inactive_period", "(int, default -1) policy alter: iterations at rate 0; positive")
    .Arg("stepsizes",
         "(list of int) policy multistep: increasing iterations at which the rate is multiplied "
         "by gamma")
    .Arg("sub_policy_num_iters",
         "(list of int) policy composite: how many iterations each sub-policy runs; sub-policy i "
         "takes the arguments above prefixed sub_policy_<i>_ (policy required, lr_scale 1.0)")
    .SetDoc("Computes the learning rate of the current iteration.");
REGISTER_GRADIENT(LearningRate, NoGradient);

}  // namespace caffe2
