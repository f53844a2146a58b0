#include "core/gradient.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/enforce.h"
#include "core/op_alias.h"
#include "core/op_schema.h"

namespace caffe2 {

GradientMakerBase::GradientMakerBase(const OperatorDef& def,
                                     const std::vector<GradientWrapper>& g_output)
    : def_(def), g_output_(g_output), g_input_(def.input_size()) {
  C2_ENFORCE(static_cast<int>(g_output.size()) == def.output_size(), "[", def.type(),
             "] gradient maker got ", g_output.size(), " output gradients for ", def.output_size(),
             " outputs");
}

void GradientMakerBase::VerifyOp() const {
  if (const OpSchema* schema = OpSchemaRegistry::Schema(def_.type())) schema->Verify(def_);
}

GradientOpsMeta GradientMakerBase::Get() {
  VerifyOp();
  std::vector<OperatorDef> ops = GetGradientDefs();
  for (OperatorDef& op : ops) {
    op.set_is_gradient_op(true);
    if (CopyDeviceOption() && def_.has_device_option()) {
      *op.mutable_device_option() = def_.device_option();
    }
    if (CopyEngine() && def_.has_engine()) op.set_engine(def_.engine());
    if (CopyArguments() && def_.arg_size()) {
      // The maker's own arguments first, then the forward op's (one the maker already set wins).
      for (const Argument& a : def_.arg()) {
        bool overridden = false;
        for (const Argument& b : op.arg()) overridden = overridden || b.name() == a.name();
        if (!overridden) *op.add_arg() = a;
      }
    }
  }
  return {ops, g_input_};
}

std::string GradientMakerBase::I(int i) const {
  C2_ENFORCE(i >= 0 && i < def_.input_size(), "[", def_.type(), "] the gradient needs input ", i,
             ", but the op has ", def_.input_size(), " input(s)");
  return def_.input(i);
}
std::string GradientMakerBase::O(int i) const {
  C2_ENFORCE(i >= 0 && i < def_.output_size(), "[", def_.type(), "] the gradient needs output ", i,
             ", but the op has ", def_.output_size(), " output(s)");
  return def_.output(i);
}

std::string GradientMakerBase::GI(int i) {
  C2_ENFORCE(!g_input_.at(i).IsSparse(), "[", def_.type(), "] input ", i,
             " gradient already set as sparse");
  g_input_.at(i).dense_ = I(i) + "_grad";
  return g_input_.at(i).dense_;
}
std::string GradientMakerBase::GI_I(int i) {
  C2_ENFORCE(!g_input_.at(i).IsDense(), "[", def_.type(), "] input ", i,
             " gradient already set as dense");
  g_input_.at(i).indices_ = I(i) + "_grad_indices";
  return g_input_.at(i).indices_;
}
std::string GradientMakerBase::GI_V(int i) {
  C2_ENFORCE(!g_input_.at(i).IsDense(), "[", def_.type(), "] input ", i,
             " gradient already set as dense");
  g_input_.at(i).values_ = I(i) + "_grad_values";
  return g_input_.at(i).values_;
}
std::string GradientMakerBase::GO(int i) const {
  const std::string name = O(i);  // checks that output i exists
  C2_ENFORCE(g_output_.at(i).IsDense(), "[", def_.type(), "] gradient of output ", i, " ('", name,
             "') is expected to be dense");
  return g_output_.at(i).dense_;
}
std::string GradientMakerBase::GO_I(int i) const {
  C2_ENFORCE(g_output_.at(i).IsSparse(), "[", def_.type(), "] gradient of output ", i,
             " is expected to be sparse");
  return g_output_.at(i).indices_;
}
std::string GradientMakerBase::GO_V(int i) const {
  C2_ENFORCE(g_output_.at(i).IsSparse(), "[", def_.type(), "] gradient of output ", i,
             " is expected to be sparse");
  return g_output_.at(i).values_;
}
void GradientMakerBase::SetDense(int i, const std::string& name) {
  C2_ENFORCE(!g_input_.at(i).IsSparse(), "[", def_.type(), "] input ", i, " already sparse");
  g_input_.at(i).dense_ = name;
}
void GradientMakerBase::SetSparse(int i, const std::string& indices, const std::string& values) {
  C2_ENFORCE(!g_input_.at(i).IsDense(), "[", def_.type(), "] input ", i, " already dense");
  g_input_.at(i).indices_ = indices;
  g_input_.at(i).values_ = values;
}

std::vector<OperatorDef> GradientMakerBase::SingleGradientDef(
    const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
    const std::vector<std::string>& outputs, const std::vector<Argument>& args) {
  return {CreateOperatorDef(type, name, inputs, outputs, args)};
}

GradientOpsMeta ShouldNotDoGradient::Get() {
  for (const auto& g : g_output_) {
    C2_ENFORCE(g.IsEmpty(), "[", def_.type(), "] should not have a gradient, but output '",
               g.dense_.empty() ? g.values_ : g.dense_, "' has one");
  }
  return {{}, g_input_};
}

namespace {
std::map<std::string, GradientMakerCreator>& Makers() {
  static auto* m = new std::map<std::string, GradientMakerCreator>();
  return *m;
}
}  // namespace

bool GradientRegistry::Register(const std::string& op_type, GradientMakerCreator creator) {
  C2_ENFORCE(Makers().count(op_type) == 0, "Gradient for ", op_type, " registered twice");
  Makers()[op_type] = std::move(creator);
  return true;
}
bool GradientRegistry::Has(const std::string& op_type) { return Find(op_type) != nullptr; }
std::vector<std::string> GradientRegistry::Keys() {
  std::vector<std::string> keys;
  for (const auto& kv : Makers()) keys.push_back(kv.first);
  for (std::string& alias : AliasKeys(keys)) keys.push_back(std::move(alias));
  std::sort(keys.begin(), keys.end());
  return keys;
}
const GradientMakerCreator* GradientRegistry::Find(const std::string& op_type) {
  auto it = Makers().find(op_type);
  if (it == Makers().end()) {
    const std::string target = OperatorAliasTarget(op_type);  // core/op_alias.h
    if (!target.empty()) it = Makers().find(target);
  }
  return it == Makers().end() ? nullptr : &it->second;
}

GradientOpsMeta GetGradientForOp(const OperatorDef& def,
                                 const std::vector<GradientWrapper>& g_output) {
  const GradientMakerCreator* creator = GradientRegistry::Find(def.type());
  C2_ENFORCE(creator != nullptr, "[", def.type(), "] has no gradient registered in C++");
  auto maker = (*creator)(def, g_output);
  GradientOpsMeta meta = maker->Get();
  C2_ENFORCE(static_cast<int>(meta.g_input_.size()) == def.input_size(), "[", def.type(),
             "] gradient maker returned ", meta.g_input_.size(), " input gradients for ",
             def.input_size(), " inputs");
  return meta;
}

OperatorDef CreateOperatorDef(const std::string& type, const std::string& name,
                              const std::vector<std::string>& inputs,
                              const std::vector<std::string>& outputs,
                              const std::vector<Argument>& args, const DeviceOption& device_option,
                              const std::string& engine) {
  OperatorDef def;
  def.set_type(type);
  def.set_name(name);
  for (const auto& in : inputs) def.add_input(in);
  for (const auto& out : outputs) def.add_output(out);
  for (const auto& a : args) *def.add_arg() = a;
  if (device_option.has_device_type()) *def.mutable_device_option() = device_option;
  if (!engine.empty()) def.set_engine(engine);
  return def;
}

}  // namespace caffe2
