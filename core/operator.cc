#include "core/operator.h"

#include <algorithm>
#include <mutex>
#include <sstream>

#include "core/logging.h"
#include "core/name_suggestions.h"
#include "core/op_alias.h"
#include "core/workspace.h"

namespace caffe2 {

namespace {

std::string OpSummary(const OperatorDef& def) {
  std::ostringstream os;
  os << def.type() << "(";
  for (int i = 0; i < def.input_size(); ++i) os << (i ? ", " : "") << def.input(i);
  os << ") -> (";
  for (int i = 0; i < def.output_size(); ++i) os << (i ? ", " : "") << def.output(i);
  os << ")";
  if (!def.name().empty()) os << " named '" << def.name() << "'";
  return os.str();
}

// Prefixes "[Type] " unless the message already starts with it.
std::string WithOpPrefix(const std::string& type, const std::string& msg) {
  std::string prefix = "[" + type + "]";
  return msg.rfind(prefix, 0) == 0 ? msg : prefix + " " + msg;
}

// The message with the op prefix and, once, the op's inputs and outputs.
std::string WithOpContext(const OperatorDef& def, const std::string& what) {
  std::string msg = WithOpPrefix(def.type(), what);
  if (msg.find("\n  in operator ") == std::string::npos) msg += "\n  in operator " + OpSummary(def);
  return msg;
}

}  // namespace

OperatorBase::OperatorBase(const OperatorDef& def, Workspace* ws)
    : def_(def),
      device_option_(def.has_device_option() ? def.device_option() : DeviceOption()),
      device_(DeviceFromOption(device_option_)),
      ws_(ws),
      args_(def_) {
  for (const std::string& name : def_.input()) {
    const Blob* blob = ws->GetBlob(name);
    if (blob == nullptr) {
      C2_THROW("[", def_.type(), "] Encountered a non-existing input blob: ", name,
               DidYouMean(name, ws->Blobs()),
               ". Nothing in this workspace wrote or fed it: if it is a parameter, run the "
               "model's param_init_net first (workspace.RunNetOnce(model.param_init_net)); if it "
               "is an input, feed it (workspace.FeedBlob)");
    }
    inputs_.push_back(blob);
  }
  for (const std::string& name : def_.output()) outputs_.push_back(ws->CreateBlob(name));
}

bool OperatorBase::Run(int stream_id) {
  try {
    SwitchToDevice(stream_id);
    bool ok = RunOnDevice();
    if (ok) FinishDeviceComputation();
    return ok;
  } catch (EnforceNotMet& e) {
    if (net_position_ >= 0) ws_->last_failed_op_net_position = net_position_;
    e.set_message(WithOpContext(def_, e.what()));
    throw;  // keeps the exception's type (e.g. a store timeout)
  } catch (const std::exception& e) {
    if (net_position_ >= 0) ws_->last_failed_op_net_position = net_position_;
    throw EnforceNotMet(WithOpContext(def_, e.what()));
  }
}

const Tensor& OperatorBase::Input(int i) const {
  C2_ENFORCE(i >= 0 && i < InputSize(), "Input index ", i, " out of range: the op has ",
             InputSize(), " inputs");
  const Blob* blob = inputs_[i];
  C2_ENFORCE(blob->IsType<Tensor>(), "Input ", i, " ('", def_.input(i),
             "') is not a tensor: it holds ", blob->TypeName());
  return blob->Get<Tensor>();
}

Tensor* OperatorBase::Output(int i) {
  C2_ENFORCE(i >= 0 && i < OutputSize(), "Output index ", i, " out of range: the op has ",
             OutputSize(), " outputs");
  return outputs_[i]->GetMutableTensor(device_);
}

// ---- registry ----

namespace {

struct RegistryState {
  std::mutex mutex;
  std::map<int, std::map<std::string, OperatorCreator>> creators;
  PerOpEnginePrefType per_op_pref;
  GlobalEnginePrefType global_pref{{kCPU, {"DNNL"}}, {kCUDA, {"CUDNN"}}};
};

RegistryState& State() {
  static auto* state = new RegistryState();
  return *state;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> SplitEngines(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, ',')) {
    if (!cur.empty()) out.push_back(cur);
  }
  return out;
}

}  // namespace

bool OperatorRegistry::Register(int device_type, const std::string& key, OperatorCreator creator) {
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto& table = s.creators[device_type];
  C2_ENFORCE(table.count(key) == 0, "Operator ", key, " registered twice for ",
             DeviceTypeName(device_type));
  table[key] = std::move(creator);
  return true;
}

const OperatorCreator* OperatorRegistry::Find(int device_type, const std::string& key) {
  const std::string target = OperatorAliasTarget(key);  // core/op_alias.h
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.creators.find(device_type);
  if (it == s.creators.end()) return nullptr;
  auto jt = it->second.find(target.empty() ? key : target);
  return jt == it->second.end() ? nullptr : &jt->second;
}

std::vector<std::string> OperatorRegistry::Keys(int device_type) {
  std::vector<std::string> keys;
  {
    auto& s = State();
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const auto& kv : s.creators[device_type]) keys.push_back(kv.first);
  }
  for (std::string& alias : AliasKeys(keys)) keys.push_back(std::move(alias));
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> OperatorRegistry::AllKeys() {
  std::vector<std::string> keys;
  {
    auto& s = State();
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const auto& table : s.creators) {
      for (const auto& kv : table.second) keys.push_back(kv.first);
    }
  }
  for (std::string& alias : AliasKeys(keys)) keys.push_back(std::move(alias));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::vector<std::string> OperatorRegistry::NearbyNames(const std::string& name) {
  std::vector<std::string> out;
  for (const auto& key : Keys(kCPU)) {
    if (EditDistance(key, name) <= 3) out.push_back(key);
  }
  return out;
}

std::string OpRegistryKey(const std::string& op_type, const std::string& engine) {
  return (engine.empty() || engine == "DEFAULT") ? op_type : op_type + "_ENGINE_" + engine;
}

void SetPerOpEnginePref(const PerOpEnginePrefType& pref) {
  for (const auto& device : pref) {
    C2_ENFORCE(device.first == kCPU || device.first == kCUDA, "Device type ", device.first,
               " is not registered");
    for (const auto& op : device.second) {
      C2_ENFORCE(OpSchemaRegistry::Schema(op.first) != nullptr ||
                     OperatorRegistry::Find(device.first, op.first) != nullptr,
                 "Operator ", op.first, " is not registered");
    }
  }
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.per_op_pref = pref;
}

void SetGlobalEnginePref(const GlobalEnginePrefType& pref) {
  for (const auto& device : pref) {
    C2_ENFORCE(device.first == kCPU || device.first == kCUDA, "Device type ", device.first,
               " is not registered");
  }
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.global_pref = pref;
}

GlobalEnginePrefType GlobalEnginePref() {
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.global_pref;
}

void SetOpEnginePref(const std::string& op_type,
                     const std::map<int, std::vector<std::string>>& pref) {
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (const auto& device : pref) s.per_op_pref[device.first][op_type] = device.second;
}

std::unique_ptr<OperatorBase> CreateOperator(const OperatorDef& def, Workspace* ws,
                                             int net_position) {
  const std::string& type = def.type();
  C2_ENFORCE(!type.empty(), "Cannot create an operator without a type (inputs: ", def.input_size(),
             ", outputs: ", def.output_size(), ", name: '", def.name(), "')");
  if (const OpSchema* schema = OpSchemaRegistry::Schema(type)) {
    schema->Verify(def);
  }
  const int device_type = def.has_device_option() ? def.device_option().device_type() : kCPU;

  std::vector<std::string> engines = SplitEngines(def.engine());
  {
    auto& s = State();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto per_op = s.per_op_pref.find(device_type);
    if (per_op != s.per_op_pref.end()) {
      auto it = per_op->second.find(type);
      if (it != per_op->second.end())
        engines.insert(engines.end(), it->second.begin(), it->second.end());
    }
    auto global = s.global_pref.find(device_type);
    if (global != s.global_pref.end()) {
      engines.insert(engines.end(), global->second.begin(), global->second.end());
    }
  }

  auto construct = [&](const OperatorCreator& creator, const std::string& engine) {
    std::unique_ptr<OperatorBase> op;
    try {
      op = creator(def, ws);
    } catch (const UnsupportedOperatorFeature&) {
      throw;
    } catch (EnforceNotMet& e) {
      e.set_message(WithOpPrefix(type, e.what()));
      throw;
    } catch (const std::exception& e) {
      throw EnforceNotMet(WithOpPrefix(type, e.what()));
    }
    op->set_engine(engine);
    op->set_net_position(net_position);
    return op;
  };

  for (const std::string& engine : engines) {
    const OperatorCreator* creator =
        OperatorRegistry::Find(device_type, OpRegistryKey(type, engine));
    if (!creator) continue;
    try {
      auto op = construct(*creator, engine);
      C2_VLOG(1) << type << " '" << def.name() << "' runs on engine " << engine;
      return op;
    } catch (const UnsupportedOperatorFeature& e) {
      C2_LOG(Info) << "Engine " << engine << " cannot run " << type << ": " << e.what();
    }
  }
  const OperatorCreator* creator = OperatorRegistry::Find(device_type, type);
  if (!creator) {
    std::string hint;
    auto near = OperatorRegistry::NearbyNames(type);
    if (!near.empty()) {
      hint = " Did you mean: ";
      for (size_t i = 0; i < near.size(); ++i) hint += (i ? ", " : "") + near[i];
      hint += "?";
    }
    bool elsewhere = OperatorRegistry::Find(kCPU, type) || OperatorRegistry::Find(kCUDA, type);
    C2_THROW("Cannot create operator of type '", type, "' on the device '",
             DeviceTypeName(device_type), "'.",
             elsewhere ? " It exists on another device type." : " No such operator is registered.",
             hint);
  }
  return construct(*creator, "");
}

}  // namespace caffe2
