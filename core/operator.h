// Operators: the unit of computation of a net (spec §5.3, §5.4).
//
// OperatorBase binds an OperatorDef to a Workspace: it looks up every input blob (a missing one is
// an error naming the op and the blob), creates every output blob, and gives typed access to
// arguments. Operator<Context> adds a device context. Run() wraps the kernel so that every error
// message starts with "[<op type>]" and names the op's inputs and outputs.
//
// Operators are registered per device type under a key: the op type, or "<Type>_ENGINE_<ENGINE>"
// for an engine variant. CreateOperator tries the engines of the def (a comma list), then the
// per-op and global engine preferences, then the plain type: an engine that does not exist falls
// back silently.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"
#include "core/argument.h"
#include "core/blob.h"
#include "core/context.h"
#include "core/op_schema.h"

namespace caffe2 {

class Workspace;

// Thrown by an engine's constructor when it cannot handle a def; CreateOperator then tries the
// next.
class UnsupportedOperatorFeature : public EnforceNotMet {
 public:
  using EnforceNotMet::EnforceNotMet;
};

class OperatorBase {
 public:
  OperatorBase(const OperatorDef& def, Workspace* ws);
  virtual ~OperatorBase() = default;
  OperatorBase(const OperatorBase&) = delete;
  OperatorBase& operator=(const OperatorBase&) = delete;

  // Runs the kernel. Errors are rethrown as EnforceNotMet starting with "[<type>]".
  // Returns false when the kernel reports failure without throwing.
  bool Run(int stream_id = 0);

  const OperatorDef& debug_def() const { return def_; }
  const std::string& type() const { return def_.type(); }
  const DeviceOption& device_option() const { return device_option_; }
  Device device() const { return device_; }
  Workspace* workspace() const { return ws_; }
  const std::string& engine() const { return engine_; }
  void set_engine(const std::string& engine) { engine_ = engine; }
  int net_position() const { return net_position_; }
  void set_net_position(int position) { net_position_ = position; }

  int InputSize() const { return static_cast<int>(inputs_.size()); }
  int OutputSize() const { return static_cast<int>(outputs_.size()); }
  const Blob& InputBlob(int i) const { return *inputs_.at(i); }
  Blob* OutputBlob(int i) { return outputs_.at(i); }
  // The input as a tensor; an error names the blob when it holds something else.
  const Tensor& Input(int i) const;
  // The output tensor on this op's device (created or converted as needed).
  Tensor* Output(int i);
  template <class T>
  const T& InputObject(int i) const {
    return InputBlob(i).Get<T>();
  }
  template <class T>
  T* OutputObject(int i) {
    return OutputBlob(i)->GetMutable<T>();
  }
  bool IsInputOutputAlias(int i, int j) const { return inputs_.at(i) == outputs_.at(j); }

  bool HasArgument(const std::string& name) const { return args_.HasArgument(name); }
  template <class T>
  T GetSingleArgument(const std::string& name, const T& default_value) const {
    return args_.GetSingleArgument<T>(name, default_value);
  }
  template <class T>
  std::vector<T> GetRepeatedArgument(const std::string& name,
                                     const std::vector<T>& default_value = {}) const {
    return args_.GetRepeatedArgument<T>(name, default_value);
  }
  template <class T>
  bool HasSingleArgumentOfType(const std::string& name) const {
    return args_.HasSingleArgumentOfType<T>(name);
  }

 protected:
  virtual bool RunOnDevice() = 0;
  virtual void SwitchToDevice(int /*stream_id*/) {}
  virtual void FinishDeviceComputation() {}

 private:
  OperatorDef def_;
  DeviceOption device_option_;
  Device device_;
  Workspace* ws_;
  ArgumentHelper args_;
  std::vector<const Blob*> inputs_;
  std::vector<Blob*> outputs_;
  std::string engine_;
  int net_position_ = -1;
};

template <class Context>
class Operator : public OperatorBase {
 public:
  Operator(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), context_(device_option()) {}

 protected:
  void SwitchToDevice(int stream_id) override { context_.SwitchToDevice(stream_id); }
  void FinishDeviceComputation() override { context_.FinishDeviceComputation(); }
  Context context_;
};

using OperatorCreator =
    std::function<std::unique_ptr<OperatorBase>(const OperatorDef&, Workspace*)>;

class OperatorRegistry {
 public:
  // Registers at load time; a duplicate (device type, key) throws.
  static bool Register(int device_type, const std::string& key, OperatorCreator creator);
  static const OperatorCreator* Find(int device_type, const std::string& key);
  static std::vector<std::string> Keys(int device_type);
  // Keys of every device type, sorted and unique.
  static std::vector<std::string> AllKeys();
  // Known op names within edit distance 3 of `name` (for error messages).
  static std::vector<std::string> NearbyNames(const std::string& name);
};

// "Type" when engine is "" or "DEFAULT", else "Type_ENGINE_<engine>".
std::string OpRegistryKey(const std::string& op_type, const std::string& engine);

using PerOpEnginePrefType = std::map<int, std::map<std::string, std::vector<std::string>>>;
using GlobalEnginePrefType = std::map<int, std::vector<std::string>>;
void SetPerOpEnginePref(const PerOpEnginePrefType& pref);
void SetGlobalEnginePref(const GlobalEnginePrefType& pref);
// The global preference in force: by default DNNL on the CPU and CUDNN on CUDA (an engine the build
// lacks is skipped, so the default engine runs).
GlobalEnginePrefType GlobalEnginePref();
void SetOpEnginePref(const std::string& op_type,
                     const std::map<int, std::vector<std::string>>& pref);

// Verifies the def against its schema, picks an implementation and constructs it.
std::unique_ptr<OperatorBase> CreateOperator(const OperatorDef& def, Workspace* ws,
                                             int net_position = -1);

namespace detail {
template <class Op>
OperatorCreator MakeCreator() {
  return [](const OperatorDef& def, Workspace* ws) -> std::unique_ptr<OperatorBase> {
    return std::make_unique<Op>(def, ws);
  };
}
}  // namespace detail

}  // namespace caffe2

// Registers Op for the CPU under `key` (the op type, or Type_ENGINE_X for an engine variant).
#define REGISTER_CPU_OPERATOR(key, ...)                           \
  static const bool c2_cpu_op_registered_##key [[maybe_unused]] = \
      ::caffe2::OperatorRegistry::Register(::caffe2::kCPU, #key,  \
                                           ::caffe2::detail::MakeCreator<__VA_ARGS__>())
#define REGISTER_CUDA_OPERATOR(key, ...)                           \
  static const bool c2_cuda_op_registered_##key [[maybe_unused]] = \
      ::caffe2::OperatorRegistry::Register(::caffe2::kCUDA, #key,  \
                                           ::caffe2::detail::MakeCreator<__VA_ARGS__>())
