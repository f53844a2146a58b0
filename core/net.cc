#include "core/net.h"

#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "core/logging.h"
#include "core/net_executors.h"
#include "core/workspace.h"

namespace caffe2 {

NetBase::NetBase(const NetDef& def, Workspace* ws)
    : def_(def),
      ws_(ws),
      external_input_(def.external_input().begin(), def.external_input().end()),
      external_output_(def.external_output().begin(), def.external_output().end()) {
  const std::string& name = def_.name();
  std::set<std::string> known(external_input_.begin(), external_input_.end());
  const bool check_inputs = !external_input_.empty();
  for (int i = 0; i < def_.op_size(); ++i) {
    const OperatorDef& op_def = def_.op(i);
    if (check_inputs) {
      for (const auto& in : op_def.input()) {
        C2_ENFORCE(known.count(in), "Source for input ", in, " is unknown for net ", name,
                   ", operator ", op_def.type(), " (#", i, ")");
      }
    }
    for (const auto& out : op_def.output()) known.insert(out);
  }
  for (const auto& out : external_output_) {
    bool produced = known.count(out) > 0;
    if (!produced) {
      for (const auto& op_def : def_.op()) {
        for (const auto& in : op_def.input()) produced = produced || in == out;
      }
    }
    C2_ENFORCE(produced, "Net ", name, " declares external output ", out,
               " that no operator produces");
  }
  for (int i = 0; i < def_.op_size(); ++i) {
    if (!def_.op(i).has_device_option() && def_.has_device_option()) {
      OperatorDef with_device = def_.op(i);
      *with_device.mutable_device_option() = def_.device_option();
      ops_.push_back(CreateOperator(with_device, ws, i));
    } else {
      ops_.push_back(CreateOperator(def_.op(i), ws, i));
    }
  }
  ArgumentHelper args(def_);
  timeline_path_ = args.GetSingleArgument<std::string>("timeline", "");
  trace_origin_ = std::chrono::steady_clock::now();
}

NetBase::~NetBase() {
  if (!tracing()) return;
  try {
    WriteTimeline();
  } catch (const std::exception& e) {
    C2_LOG(Error) << "Could not write the timeline of net " << Name() << ": " << e.what();
  }
}

bool NetBase::Run() { return RunImpl(); }

bool NetBase::RunOp(int i) {
  if (!tracing()) return ops_[i]->Run();
  auto start = std::chrono::steady_clock::now();
  bool ok = ops_[i]->Run();
  auto end = std::chrono::steady_clock::now();
  using us = std::chrono::microseconds;
  TraceEvent ev{i, std::chrono::duration_cast<us>(start - trace_origin_).count(),
                std::chrono::duration_cast<us>(end - start).count(),
                std::hash<std::thread::id>()(std::this_thread::get_id()) % 100000};
  std::lock_guard<std::mutex> lock(trace_mutex_);
  trace_.push_back(ev);
  return ok;
}

std::vector<OperatorBase*> NetBase::GetOperators() const {
  std::vector<OperatorBase*> ops;
  for (const auto& op : ops_) ops.push_back(op.get());
  return ops;
}

std::vector<float> NetBase::TEST_Benchmark(int warmup_runs, int main_runs, bool run_individual) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup_runs; ++i) C2_ENFORCE(Run(), "Net ", Name(), " failed during warmup");
  auto start = clock::now();
  for (int i = 0; i < main_runs; ++i) C2_ENFORCE(Run(), "Net ", Name(), " failed");
  double total_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  std::vector<float> result{main_runs > 0 ? static_cast<float>(total_ms / main_runs) : 0.f};
  if (!run_individual || main_runs <= 0) return result;
  std::vector<double> per_op(ops_.size(), 0.0);
  for (int r = 0; r < main_runs; ++r) {
    for (size_t i = 0; i < ops_.size(); ++i) {
      auto t0 = clock::now();
      C2_ENFORCE(ops_[i]->Run(), "Operator #", i, " of net ", Name(), " failed");
      per_op[i] += std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    }
  }
  for (double t : per_op) result.push_back(static_cast<float>(t / main_runs));
  return result;
}

namespace {
std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}
}  // namespace

void NetBase::WriteTimeline(const std::string& path) {
  std::string target = path.empty() ? timeline_path_ : path;
  C2_ENFORCE(!target.empty(), "Net ", Name(), " has no timeline path");
  std::ofstream out(target);
  C2_ENFORCE(out.good(), "Cannot open timeline file ", target, " for net ", Name());
  std::lock_guard<std::mutex> lock(trace_mutex_);
  out << "{\"traceEvents\": [";
  for (size_t k = 0; k < trace_.size(); ++k) {
    const TraceEvent& ev = trace_[k];
    const OperatorDef& op = def_.op(ev.op);
    out << (k ? ",\n" : "\n") << "{\"name\": \"" << JsonEscape(op.type()) << "\", \"cat\": \""
        << JsonEscape(Name()) << "\", \"ph\": \"X\", \"ts\": " << ev.start_us
        << ", \"dur\": " << ev.duration_us << ", \"pid\": 0, \"tid\": " << ev.thread
        << ", \"args\": {\"op_index\": " << ev.op << ", \"op_name\": \"" << JsonEscape(op.name())
        << "\", \"output\": \"" << JsonEscape(op.output_size() ? op.output(0) : "") << "\"}}";
  }
  out << "\n], \"displayTimeUnit\": \"ms\"}\n";
  C2_ENFORCE(out.good(), "Writing timeline file ", target, " failed");
}

std::unique_ptr<NetBase> CreateNet(const NetDef& def, Workspace* ws) {
  const std::string type = def.has_type() ? def.type() : "simple";
  if (type.empty() || type == "simple") return CreateSimpleNet(def, ws);
  static const std::set<std::string> kParallel = {
      "dag",           "async_dag", "async_scheduling",  "async_simple",
      "async_polling", "prof_dag",  "singlethread_async"};
  if (kParallel.count(type)) return CreateDAGNet(def, ws);
  C2_THROW("Unknown net type '", type, "' for net ", def.name(),
           ": known types are simple, dag, async_dag, async_scheduling, async_simple, "
           "async_polling, prof_dag, singlethread_async");
}

}  // namespace caffe2
