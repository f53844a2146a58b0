// Print: [X] -> [], writes a tensor (or a string blob) as text.
// Args: to_file (0: stdout; 1: <workspace root>/<input name>.log, truncated when the op is
// created),
//       limit (most elements shown; 0 means 1000), every_n (print on every n-th run, default 1).
// Format: "Tensor <name> of type <t>. Dims: (d0,d1,): v0,v1,..."
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace caffe2 {
namespace {

class PrintOp final : public Operator<CPUContext> {
 public:
  PrintOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        limit_(GetSingleArgument<int>("limit", 0)),
        every_n_(GetSingleArgument<int>("every_n", 1)) {
    C2_ENFORCE(every_n_ >= 1, "'every_n' must be at least 1, got ", every_n_);
    if (limit_ <= 0) limit_ = 1000;
    if (GetSingleArgument<bool>("to_file", false)) {
      std::string path = ws->RootFolder() + "/" + def.input(0) + ".log";
      file_ = std::make_unique<std::ofstream>(path, std::ios::trunc);
      C2_ENFORCE(file_->good(), "cannot open log file ", path);
    }
  }

  bool RunOnDevice() override {
    if (++runs_ % every_n_ != 0) return true;
    std::ostream& out = file_ ? *file_ : std::cout;
    const std::string& name = debug_def().input(0);
    const Blob& blob = InputBlob(0);
    if (blob.IsType<std::string>()) {
      out << "String " << name << ": " << blob.Get<std::string>() << std::endl;
      return true;
    }
    if (!blob.IsType<Tensor>()) {
      out << "Blob " << name << " of type " << blob.TypeName() << std::endl;
      return true;
    }
    Tensor cpu;
    const Tensor* t = &blob.Get<Tensor>();
    if (t->device().type != kCPU) {
      cpu.CopyFrom(*t);
      t = &cpu;
    }
    out << "Tensor " << name << " of type " << t->meta().name << ". Dims: (";
    for (int64_t d : t->dims()) out << d << ",";
    out << "): ";
    const int64_t n = std::min<int64_t>(t->numel(), limit_);
    for (int64_t i = 0; i < n; ++i) {
      WriteElement(out, *t, i);
      if (i + 1 < n) out << ",";
    }
    out << std::endl;
    return true;
  }

 private:
  static void WriteElement(std::ostream& out, const Tensor& t, int64_t i) {
    switch (t.dtype()) {
      case DataType::FLOAT:
        out << t.data<float>()[i];
        break;
      case DataType::DOUBLE:
        out << t.data<double>()[i];
        break;
      case DataType::INT32:
        out << t.data<int32_t>()[i];
        break;
      case DataType::INT64:
        out << t.data<int64_t>()[i];
        break;
      case DataType::INT16:
        out << t.data<int16_t>()[i];
        break;
      case DataType::UINT16:
        out << t.data<uint16_t>()[i];
        break;
      case DataType::INT8:
        out << static_cast<int>(t.data<int8_t>()[i]);
        break;
      case DataType::UINT8:
      case DataType::BYTE:
        out << static_cast<int>(t.data<uint8_t>()[i]);
        break;
      case DataType::BOOL:
        out << t.data<bool>()[i];
        break;
      case DataType::FLOAT16:
        out << HalfToFloat(t.data<float16>()[i]);
        break;
      case DataType::STRING:
        out << t.data<std::string>()[i];
        break;
      default:
        out << "?";
        break;
    }
  }

  int limit_;
  int every_n_;
  int64_t runs_ = 0;
  std::unique_ptr<std::ofstream> file_;
};

}  // namespace

REGISTER_CPU_OPERATOR(Print, PrintOp);
REGISTER_GPU_FALLBACK(Print);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(Print)
    .NumInputs(1)
    .NumOutputs(0)
    .Arg("to_file", "Write to <root>/<input name>.log instead of stdout")
    .Arg("limit", "Most elements printed (0 means 1000)")
    .Arg("every_n", "Print on every n-th run")
    .SetDoc("Prints the input tensor.");
REGISTER_GRADIENT(Print, ShouldNotDoGradient);

}  // namespace caffe2
