// OpSchema: what an operator accepts (spec §5.5): input/output counts, in-place rules, required
// arguments, documentation, shape/type inference, cost and device inference. Schemas are registered
// with OPERATOR_SCHEMA(Type) beside the operator, and CreateOperator verifies every def against it.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"

namespace caffe2 {

// The dims of a TensorShape, for inference functions that share checks with the kernels.
inline std::vector<int64_t> DimsOf(const TensorShape& shape) {
  return {shape.dims().begin(), shape.dims().end()};
}

class OpSchema {
 public:
  static constexpr int kInf = std::numeric_limits<int>::max();

  struct Argument {
    std::string name;
    std::string description;
    bool required = false;
  };
  struct Cost {
    uint64_t flops = 0;
    uint64_t bytes_moved = 0;
    uint64_t params_bytes = 0;
  };
  using TensorInferenceFunction =
      std::function<std::vector<TensorShape>(const OperatorDef&, const std::vector<TensorShape>&)>;
  using CostInferenceFunction =
      std::function<Cost(const OperatorDef&, const std::vector<TensorShape>&)>;
  using DeviceInferenceFunction =
      std::function<std::pair<std::vector<DeviceOption>, std::vector<DeviceOption>>(
          const OperatorDef&)>;

  OpSchema() = default;
  OpSchema(const std::string& name, const std::string& file, int line);

  // Counts.
  OpSchema& NumInputs(int n) { return NumInputs(n, n); }
  OpSchema& NumInputs(int min, int max);
  OpSchema& NumInputs(std::set<int> allowed);
  OpSchema& NumOutputs(int n) { return NumOutputs(n, n); }
  OpSchema& NumOutputs(int min, int max);
  OpSchema& NumOutputs(std::set<int> allowed);
  OpSchema& NumInputsOutputs(std::function<bool(int, int)> fn);
  OpSchema& OutputCalculator(std::function<int(int)> fn);
  OpSchema& SameNumberOfOutput();

  // In-place rules; the default forbids any input/output name sharing.
  OpSchema& AllowInplace(std::function<bool(int, int)> fn);
  OpSchema& AllowInplace(std::set<std::pair<int, int>> pairs);
  OpSchema& AllowOneToOneInplace();
  OpSchema& EnforceInplace(std::function<bool(int, int)> fn);
  OpSchema& EnforceInplace(std::set<std::pair<int, int>> pairs);
  OpSchema& EnforceOneToOneInplace();

  // Documentation.
  OpSchema& SetDoc(const std::string& doc);
  OpSchema& Arg(const std::string& name, const std::string& description, bool required = false);
  OpSchema& Input(int n, const std::string& name, const std::string& description);
  OpSchema& Output(int n, const std::string& name, const std::string& description);
  OpSchema& Private();
  OpSchema& InputsCanCrossDevices();

  // Inference.
  OpSchema& TensorInference(TensorInferenceFunction fn);
  OpSchema& IdenticalTypeAndShape();
  OpSchema& IdenticalTypeAndShapeOfInput(int idx);
  OpSchema& ScalarType(TensorProto::DataType type);  // every output is a 0-d tensor of `type`
  OpSchema& CostInference(CostInferenceFunction fn);
  // The cost of an op that computes each output value from the values at the same place: `flops`
  // per value of input 0, and bytes moved = every input read + one output like input 0 written.
  OpSchema& PointwiseCostInference(uint64_t flops_per_value);
  OpSchema& DeviceInference(DeviceInferenceFunction fn);

  // Throws an error naming the op and the rule it breaks.
  void Verify(const OperatorDef& def) const;
  bool Allowed(int num_inputs, int num_outputs) const;
  int CalculateOutput(int num_inputs) const;
  // The output shapes from the inference function (unknown without one), after Verify(def).
  std::vector<TensorShape> InferTensor(const OperatorDef& def,
                                       const std::vector<TensorShape>& inputs) const;
  bool HasTensorInference() const { return static_cast<bool>(tensor_inference_); }
  Cost InferCost(const OperatorDef& def, const std::vector<TensorShape>& inputs) const;
  bool HasCostInference() const { return static_cast<bool>(cost_inference_); }
  std::pair<std::vector<DeviceOption>, std::vector<DeviceOption>> InferDevice(
      const OperatorDef& def) const;

  const std::string& name() const { return name_; }
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& doc() const { return doc_; }
  bool is_private() const { return private_; }
  bool inputs_can_cross_devices() const { return inputs_can_cross_devices_; }
  int min_input() const { return min_input_; }
  int max_input() const { return max_input_; }
  int min_output() const { return min_output_; }
  int max_output() const { return max_output_; }
  bool num_inputs_allowed(int n) const;
  bool num_outputs_allowed(int n) const;
  const std::vector<Argument>& args() const { return args_; }
  const std::vector<std::pair<std::string, std::string>>& input_desc() const { return input_desc_; }
  const std::vector<std::pair<std::string, std::string>>& output_desc() const {
    return output_desc_;
  }
  bool inplace_allowed(int in, int out) const;
  bool inplace_enforced(int in, int out) const;

 private:
  std::string name_, file_, doc_;
  int line_ = 0;
  int min_input_ = 0, max_input_ = kInf, min_output_ = 0, max_output_ = kInf;
  std::function<bool(int)> num_inputs_allowed_ = [](int) { return true; };
  std::function<bool(int)> num_outputs_allowed_ = [](int) { return true; };
  std::function<bool(int, int)> num_inputs_outputs_allowed_ = [](int, int) { return true; };
  std::function<int(int)> calculate_output_;
  std::function<bool(int, int)> inplace_allowed_ = [](int, int) { return false; };
  std::function<bool(int, int)> inplace_enforced_ = [](int, int) { return false; };
  std::vector<Argument> args_;
  std::vector<std::pair<std::string, std::string>> input_desc_, output_desc_;
  bool private_ = false;
  bool inputs_can_cross_devices_ = false;
  TensorInferenceFunction tensor_inference_;
  CostInferenceFunction cost_inference_;
  DeviceInferenceFunction device_inference_;
};

class OpSchemaRegistry {
 public:
  // Registers a new schema; a duplicate name throws at load time.
  static OpSchema& NewSchema(const std::string& name, const std::string& file, int line);
  // Null when the op has no schema.
  static const OpSchema* Schema(const std::string& name);
  static std::vector<std::string> Keys();
};

}  // namespace caffe2

#define OPERATOR_SCHEMA(name)                                       \
  static ::caffe2::OpSchema& c2_op_schema_##name [[maybe_unused]] = \
      ::caffe2::OpSchemaRegistry::NewSchema(#name, __FILE__, __LINE__)
