// Gradient makers (spec §5.6): for a forward OperatorDef and the names of its output gradients, a
// maker emits the gradient OperatorDefs and names each input's gradient. Registered beside the op
// with REGISTER_GRADIENT(Type, Maker). The autodiff driver (versioning, accumulation) is Python's.
//
// Naming: dense gradient of X is "X_grad"; sparse is "X_grad_indices" / "X_grad_values".
// By default every gradient op copies the forward op's device option, engine and all arguments.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"

namespace caffe2 {

struct GradientWrapper {
  std::string dense_;
  std::string indices_;
  std::string values_;
  bool IsDense() const { return !dense_.empty(); }
  bool IsSparse() const { return !indices_.empty() || !values_.empty(); }
  bool IsEmpty() const { return !IsDense() && !IsSparse(); }
};

struct GradientOpsMeta {
  std::vector<OperatorDef> ops_;
  std::vector<GradientWrapper> g_input_;
};

class GradientMakerBase {
 public:
  GradientMakerBase(const OperatorDef& def, const std::vector<GradientWrapper>& g_output);
  virtual ~GradientMakerBase() = default;

  virtual bool CopyDeviceOption() const { return true; }
  virtual bool CopyEngine() const { return true; }
  virtual bool CopyArguments() const { return true; }
  // Checks the forward def against its schema.
  virtual void VerifyOp() const;
  // Verifies, builds the ops and marks each one is_gradient_op.
  virtual GradientOpsMeta Get();
  virtual std::vector<OperatorDef> GetGradientDefs() = 0;

  const OperatorDef& Def() const { return def_; }

 protected:
  // Input / output i's name; an error naming the op when it has no such input / output (a def
  // the schema accepts may have fewer than the maker reads).
  std::string I(int i) const;
  std::string O(int i) const;
  // Names input i's dense gradient "<input>_grad".
  std::string GI(int i);
  std::string GI_I(int i);
  std::string GI_V(int i);
  // The dense gradient given for output i (throws if it is sparse or missing).
  std::string GO(int i) const;
  std::string GO_I(int i) const;
  std::string GO_V(int i) const;
  const GradientWrapper& GradOut(int i) const { return g_output_.at(i); }
  void SetDense(int i, const std::string& name);
  void SetSparse(int i, const std::string& indices, const std::string& values);

  static std::vector<OperatorDef> SingleGradientDef(const std::string& type,
                                                    const std::string& name,
                                                    const std::vector<std::string>& inputs,
                                                    const std::vector<std::string>& outputs,
                                                    const std::vector<Argument>& args = {});

  const OperatorDef& def_;
  const std::vector<GradientWrapper>& g_output_;
  std::vector<GradientWrapper> g_input_;
};

// No gradient ops and no input gradients (Iter, StopGradient, ...).
class NoGradient : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override { return {}; }
};

// Asking for a gradient is an error when any output has a gradient (Save, Accuracy, ...).
class ShouldNotDoGradient : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  GradientOpsMeta Get() override;
  std::vector<OperatorDef> GetGradientDefs() override { return {}; }
};

using GradientMakerCreator = std::function<std::unique_ptr<GradientMakerBase>(
    const OperatorDef&, const std::vector<GradientWrapper>&)>;

class GradientRegistry {
 public:
  static bool Register(const std::string& op_type, GradientMakerCreator creator);
  static bool Has(const std::string& op_type);
  static std::vector<std::string> Keys();
  static const GradientMakerCreator* Find(const std::string& op_type);
};

// Runs the registered maker; throws when the op type has none.
GradientOpsMeta GetGradientForOp(const OperatorDef& def,
                                 const std::vector<GradientWrapper>& g_output);

// Builds an OperatorDef; `name` is always set, device option only when it has a device type,
// engine only when non-empty.
OperatorDef CreateOperatorDef(const std::string& type, const std::string& name,
                              const std::vector<std::string>& inputs,
                              const std::vector<std::string>& outputs,
                              const std::vector<Argument>& args = {},
                              const DeviceOption& device_option = DeviceOption(),
                              const std::string& engine = "");

}  // namespace caffe2

#define REGISTER_GRADIENT(type, ...)                                                             \
  static const bool c2_gradient_registered_##type [[maybe_unused]] =                             \
      ::caffe2::GradientRegistry::Register(                                                      \
          #type, [](const ::caffe2::OperatorDef& def,                                            \
                    const std::vector<::caffe2::GradientWrapper>& g_output) {                    \
            return std::unique_ptr<::caffe2::GradientMakerBase>(new __VA_ARGS__(def, g_output)); \
          })
