#include "core/op_schema.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "core/enforce.h"
#include "core/op_alias.h"
#include "core/types.h"

namespace caffe2 {

OpSchema::OpSchema(const std::string& name, const std::string& file, int line)
    : name_(name), file_(file), line_(line) {}

OpSchema& OpSchema::NumInputs(int min, int max) {
  min_input_ = min;
  max_input_ = max;
  return *this;
}
OpSchema& OpSchema::NumInputs(std::set<int> allowed) {
  min_input_ = allowed.empty() ? 0 : *allowed.begin();
  max_input_ = allowed.empty() ? 0 : *allowed.rbegin();
  num_inputs_allowed_ = [allowed](int n) { return allowed.count(n) > 0; };
  return *this;
}
OpSchema& OpSchema::NumOutputs(int min, int max) {
  min_output_ = min;
  max_output_ = max;
  return *this;
}
OpSchema& OpSchema::NumOutputs(std::set<int> allowed) {
  min_output_ = allowed.empty() ? 0 : *allowed.begin();
  max_output_ = allowed.empty() ? 0 : *allowed.rbegin();
  num_outputs_allowed_ = [allowed](int n) { return allowed.count(n) > 0; };
  return *this;
}
OpSchema& OpSchema::NumInputsOutputs(std::function<bool(int, int)> fn) {
  num_inputs_outputs_allowed_ = std::move(fn);
  return *this;
}
OpSchema& OpSchema::OutputCalculator(std::function<int(int)> fn) {
  calculate_output_ = std::move(fn);
  return *this;
}
OpSchema& OpSchema::SameNumberOfOutput() {
  return OutputCalculator([](int n) { return n; });
}

OpSchema& OpSchema::AllowInplace(std::function<bool(int, int)> fn) {
  inplace_allowed_ = std::move(fn);
  return *this;
}
OpSchema& OpSchema::AllowInplace(std::set<std::pair<int, int>> pairs) {
  return AllowInplace([pairs](int in, int out) { return pairs.count({in, out}) > 0; });
}
OpSchema& OpSchema::AllowOneToOneInplace() {
  return AllowInplace([](int in, int out) { return in == out; });
}
OpSchema& OpSchema::EnforceInplace(std::function<bool(int, int)> fn) {
  inplace_enforced_ = fn;
  inplace_allowed_ = std::move(fn);
  return *this;
}
OpSchema& OpSchema::EnforceInplace(std::set<std::pair<int, int>> pairs) {
  return EnforceInplace([pairs](int in, int out) { return pairs.count({in, out}) > 0; });
}
OpSchema& OpSchema::EnforceOneToOneInplace() {
  return EnforceInplace([](int in, int out) { return in == out; });
}

OpSchema& OpSchema::SetDoc(const std::string& doc) {
  doc_ = doc;
  return *this;
}
OpSchema& OpSchema::Arg(const std::string& name, const std::string& description, bool required) {
  args_.push_back({name, description, required});
  return *this;
}
OpSchema& OpSchema::Input(int n, const std::string& name, const std::string& description) {
  if (static_cast<int>(input_desc_.size()) <= n) input_desc_.resize(n + 1);
  input_desc_[n] = {name, description};
  return *this;
}
OpSchema& OpSchema::Output(int n, const std::string& name, const std::string& description) {
  if (static_cast<int>(output_desc_.size()) <= n) output_desc_.resize(n + 1);
  output_desc_[n] = {name, description};
  return *this;
}
OpSchema& OpSchema::Private() {
  private_ = true;
  return *this;
}
OpSchema& OpSchema::InputsCanCrossDevices() {
  inputs_can_cross_devices_ = true;
  return *this;
}

OpSchema& OpSchema::TensorInference(TensorInferenceFunction fn) {
  tensor_inference_ = std::move(fn);
  return *this;
}
OpSchema& OpSchema::IdenticalTypeAndShape() {
  return TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
    return std::vector<TensorShape>(in);
  });
}
OpSchema& OpSchema::IdenticalTypeAndShapeOfInput(int idx) {
  return TensorInference([idx](const OperatorDef& def, const std::vector<TensorShape>& in) {
    std::vector<TensorShape> out(def.output_size());
    for (auto& s : out) s = in.at(idx);
    return out;
  });
}
OpSchema& OpSchema::ScalarType(TensorProto::DataType type) {
  return TensorInference([type](const OperatorDef& def, const std::vector<TensorShape>&) {
    std::vector<TensorShape> out(def.output_size());
    for (auto& s : out) s.set_data_type(type);
    return out;
  });
}
OpSchema& OpSchema::CostInference(CostInferenceFunction fn) {
  cost_inference_ = std::move(fn);
  return *this;
}

OpSchema& OpSchema::PointwiseCostInference(uint64_t flops_per_value) {
  return CostInference([flops_per_value](const OperatorDef&, const std::vector<TensorShape>& in) {
    auto values = [](const TensorShape& t) {
      uint64_t n = 1;
      for (int64_t d : t.dims()) n *= static_cast<uint64_t>(d);
      return n;
    };
    auto itemsize = [](const TensorShape& t) -> uint64_t {
      const DataType type = static_cast<DataType>(t.data_type());
      return IsElementType(type) ? TypeMeta::FromDataType(type).itemsize : sizeof(float);
    };
    Cost c;
    const uint64_t n = in.empty() ? 0 : values(in[0]);
    c.flops = flops_per_value * n;
    for (const TensorShape& t : in) c.bytes_moved += values(t) * itemsize(t);
    if (!in.empty()) c.bytes_moved += n * itemsize(in[0]);
    return c;
  });
}
OpSchema& OpSchema::DeviceInference(DeviceInferenceFunction fn) {
  device_inference_ = std::move(fn);
  return *this;
}

bool OpSchema::num_inputs_allowed(int n) const {
  return n >= min_input_ && n <= max_input_ && num_inputs_allowed_(n);
}
bool OpSchema::num_outputs_allowed(int n) const {
  return n >= min_output_ && n <= max_output_ && num_outputs_allowed_(n);
}
bool OpSchema::Allowed(int num_inputs, int num_outputs) const {
  return num_inputs_allowed(num_inputs) && num_outputs_allowed(num_outputs) &&
         num_inputs_outputs_allowed_(num_inputs, num_outputs);
}
int OpSchema::CalculateOutput(int num_inputs) const {
  if (calculate_output_) return calculate_output_(num_inputs);
  return min_output_ == max_output_ ? min_output_ : -1;
}
bool OpSchema::inplace_allowed(int in, int out) const { return inplace_allowed_(in, out); }
bool OpSchema::inplace_enforced(int in, int out) const { return inplace_enforced_(in, out); }

void OpSchema::Verify(const OperatorDef& def) const {
  const int ni = def.input_size(), no = def.output_size();
  C2_ENFORCE(
      num_inputs_allowed(ni), "[", def.type(), "] ", ni, " inputs given, but the op takes ",
      min_input_ == max_input_
          ? MakeString(min_input_)
          : MakeString(min_input_, " to ",
                       max_input_ == kInf ? std::string("any") : std::to_string(max_input_)));
  C2_ENFORCE(
      num_outputs_allowed(no), "[", def.type(), "] ", no, " outputs given, but the op produces ",
      min_output_ == max_output_
          ? MakeString(min_output_)
          : MakeString(min_output_, " to ",
                       max_output_ == kInf ? std::string("any") : std::to_string(max_output_)));
  C2_ENFORCE(num_inputs_outputs_allowed_(ni, no), "[", def.type(), "] ", ni, " inputs and ", no,
             " outputs is not an allowed combination");
  if (calculate_output_) {
    int expected = calculate_output_(ni);
    C2_ENFORCE(expected == no, "[", def.type(), "] ", ni, " inputs need ", expected,
               " outputs, got ", no);
  }
  for (int in = 0; in < ni; ++in) {
    for (int out = 0; out < no; ++out) {
      bool same = def.input(in) == def.output(out);
      C2_ENFORCE(!same || inplace_allowed_(in, out), "[", def.type(), "] input ", in,
                 " and output ", out, " are both '", def.input(in),
                 "', but this op cannot run in place");
      C2_ENFORCE(same || !inplace_enforced_(in, out), "[", def.type(), "] input ", in, " ('",
                 def.input(in), "') and output ", out, " ('", def.output(out),
                 "') must be the same blob: this op runs in place");
    }
  }
  for (const auto& arg : args_) {
    if (!arg.required) continue;
    bool found = false;
    for (const auto& a : def.arg()) found = found || a.name() == arg.name;
    C2_ENFORCE(found, "[", def.type(), "] missing required argument '", arg.name, "'");
  }
}

std::vector<TensorShape> OpSchema::InferTensor(const OperatorDef& def,
                                               const std::vector<TensorShape>& inputs) const {
  // The inference functions rely on the counts and arguments the schema guarantees.
  Verify(def);
  if (tensor_inference_) return tensor_inference_(def, inputs);
  std::vector<TensorShape> out(def.output_size());
  for (auto& s : out) s.set_unknown_shape(true);
  return out;
}

OpSchema::Cost OpSchema::InferCost(const OperatorDef& def,
                                   const std::vector<TensorShape>& inputs) const {
  C2_ENFORCE(cost_inference_, "[", name_, "] has no cost inference function");
  return cost_inference_(def, inputs);
}

std::pair<std::vector<DeviceOption>, std::vector<DeviceOption>> OpSchema::InferDevice(
    const OperatorDef& def) const {
  if (device_inference_) return device_inference_(def);
  DeviceOption d = def.device_option();
  return {std::vector<DeviceOption>(def.input_size(), d),
          std::vector<DeviceOption>(def.output_size(), d)};
}

namespace {
std::map<std::string, std::unique_ptr<OpSchema>>& SchemaMap() {
  static auto* m = new std::map<std::string, std::unique_ptr<OpSchema>>();
  return *m;
}
}  // namespace

OpSchema& OpSchemaRegistry::NewSchema(const std::string& name, const std::string& file, int line) {
  auto& m = SchemaMap();
  auto it = m.find(name);
  if (it != m.end()) {
    C2_THROW("Schema for ", name, " registered twice: ", it->second->file(), ":",
             it->second->line(), " and ", file, ":", line);
  }
  auto& slot = m[name];
  slot = std::make_unique<OpSchema>(name, file, line);
  return *slot;
}

const OpSchema* OpSchemaRegistry::Schema(const std::string& name) {
  auto& m = SchemaMap();
  auto it = m.find(name);
  if (it == m.end()) {
    const std::string target = OperatorAliasTarget(name);  // core/op_alias.h
    if (!target.empty()) it = m.find(target);
  }
  return it == m.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpSchemaRegistry::Keys() {
  std::vector<std::string> keys;
  for (const auto& kv : SchemaMap()) keys.push_back(kv.first);
  for (std::string& alias : AliasKeys(keys)) keys.push_back(std::move(alias));
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace caffe2
