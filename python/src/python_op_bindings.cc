// Python operators (spec §2.6) and register_python_op / register_python_gradient_op (§2.3).
//
// `Python` runs a Python callable f(inputs, outputs[, workspace]) on lists of TensorCPU objects
// that alias the op's blobs; `PythonGradient` runs the gradient callable the same way. The callable
// comes from the token registry (argument `token`; the gradient op looks up "<token>_gradient") or
// from a pickled (func, args, kwargs) builder (`pickled_builder` / `pickled_grad_builder`) called
// once when the op is constructed. They live in the extension module because they need the
// interpreter, and they are registered from the module's init. The GIL is taken inside the op, so
// nets may run with it released, on any thread.
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/gradient.h"
#include "core/operator.h"
#include "python/src/bindings.h"

namespace caffe2 {
namespace python {
namespace {

struct PythonFunc {
  py::object func;
  bool needs_workspace = false;
};

// token -> function. Intentionally leaked: it holds Python objects that must not be released after
// the interpreter is gone. Only touched with the GIL held.
std::unordered_map<std::string, PythonFunc>& Registry() {
  static auto* registry = new std::unordered_map<std::string, PythonFunc>();
  return *registry;
}

// Whether Python objects may still be touched (the interpreter is up and not shutting down).
bool InterpreterAlive() { return Py_IsInitialized() && !_Py_IsFinalizing(); }

// The text of the pending Python error held by `e`, with its traceback; call with the GIL held.
std::string PythonErrorText(const py::error_already_set& e) { return e.what(); }

class PythonOpBase : public Operator<CPUContext> {
 public:
  PythonOpBase(const OperatorDef& def, Workspace* ws, const char* builder_arg,
               const char* token_suffix)
      : Operator<CPUContext>(def, ws) {
    token_ = GetSingleArgument<std::string>("token", "");
    if (!token_.empty()) token_ += token_suffix;
    pass_workspace_ = GetSingleArgument<int>("pass_workspace", 0) != 0;
    const std::string pickled = GetSingleArgument<std::string>(builder_arg, "");
    if (pickled.empty()) {
      C2_ENFORCE(!token_.empty(), "Python operator needs either a 'token' or a '", builder_arg,
                 "' argument");
      return;
    }
    std::string error;
    {
      py::gil_scoped_acquire gil;
      try {
        py::object loads = py::module::import("pickle").attr("loads");
        py::tuple builder = loads(py::bytes(pickled));
        C2_ENFORCE(builder.size() == 3, "'", builder_arg,
                   "' must be a pickled (func, args, kwargs) tuple, got ", builder.size(),
                   " items");
        py::object func = builder[0](*builder[1], **builder[2]);
        built_ = std::make_unique<py::object>(std::move(func));
      } catch (const py::error_already_set& e) {
        error = "Cannot build the Python function from '" + std::string(builder_arg) +
                "': " + PythonErrorText(e);
      }
    }
    if (!error.empty()) C2_THROW(error);
  }

  ~PythonOpBase() override {
    if (!built_) return;
    if (InterpreterAlive()) {
      py::gil_scoped_acquire gil;
      built_.reset();
    } else {
      built_->release();  // leak: the interpreter is gone
    }
  }

 protected:
  bool RunOnDevice() override {
    // Collected before taking the GIL: Output() may allocate and must not run Python.
    std::vector<Tensor*> inputs;
    std::vector<Tensor*> outputs;
    for (int i = 0; i < InputSize(); ++i) inputs.push_back(const_cast<Tensor*>(&Input(i)));
    for (int i = 0; i < OutputSize(); ++i) outputs.push_back(Output(i));
    std::string error;
    {
      py::gil_scoped_acquire gil;
      try {
        py::object func;
        bool needs_workspace = pass_workspace_;
        if (built_) {
          func = *built_;
        } else {
          auto it = Registry().find(token_);
          if (it == Registry().end()) {
            error = "Python operator for " + token_ +
                    " is not available. If this error is happening during C++ code execution, "
                    "check that the Python function was registered in this process (see "
                    "register_python_op) before running the net.";
          } else {
            func = it->second.func;
            needs_workspace = it->second.needs_workspace;
          }
        }
        if (error.empty()) {
          py::list in, out;
          for (Tensor* t : inputs) in.append(py::cast(t, py::return_value_policy::reference));
          for (Tensor* t : outputs) out.append(py::cast(t, py::return_value_policy::reference));
          if (needs_workspace) {
            func(in, out, py::cast(workspace(), py::return_value_policy::reference));
          } else {
            func(in, out);
          }
        }
      } catch (const py::error_already_set& e) {
        error = "Exception raised by the Python function: " + PythonErrorText(e);
      } catch (const py::cast_error& e) {
        error = std::string("Python function arguments could not be converted: ") + e.what();
      }
    }
    if (!error.empty()) C2_THROW(error);
    return true;
  }

 private:
  std::string token_;
  bool pass_workspace_ = false;
  std::unique_ptr<py::object> built_;
};

class PythonOp final : public PythonOpBase {
 public:
  PythonOp(const OperatorDef& def, Workspace* ws) : PythonOpBase(def, ws, "pickled_builder", "") {}
};

class PythonGradientOp final : public PythonOpBase {
 public:
  PythonGradientOp(const OperatorDef& def, Workspace* ws)
      : PythonOpBase(def, ws, "pickled_grad_builder", "_gradient") {}
};

// Inputs: every forward input, every forward output, then the selected output gradients (all when
// grad_output_indices is empty). Outputs: the selected input gradients (all when grad_input_indices
// is empty). The forward arguments are copied, so token / pickled_grad_builder travel along.
class GetPythonGradient : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    std::vector<int> go_indices = args.GetRepeatedArgument<int>("grad_output_indices", {});
    std::vector<int> gi_indices = args.GetRepeatedArgument<int>("grad_input_indices", {});
    const int num_in = Def().input_size();
    const int num_out = Def().output_size();
    std::vector<std::string> inputs;
    for (int i = 0; i < num_in; ++i) inputs.push_back(I(i));
    for (int i = 0; i < num_out; ++i) inputs.push_back(O(i));
    if (go_indices.empty()) {
      for (int i = 0; i < num_out; ++i) inputs.push_back(GO(i));
    } else {
      for (int i : go_indices) {
        C2_ENFORCE(i >= 0 && i < num_out, "grad_output_indices has ", i, " but the op has ",
                   num_out, " outputs");
        inputs.push_back(GO(i));
      }
    }
    std::vector<std::string> outputs;
    if (gi_indices.empty()) {
      for (int i = 0; i < num_in; ++i) outputs.push_back(GI(i));
    } else {
      for (int i : gi_indices) {
        C2_ENFORCE(i >= 0 && i < num_in, "grad_input_indices has ", i, " but the op has ", num_in,
                   " inputs");
        outputs.push_back(GI(i));
      }
    }
    return SingleGradientDef("PythonGradient", "", inputs, outputs);
  }
};

void RegisterPythonOperators() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto any_inplace = [](int, int) { return true; };
    if (!OpSchemaRegistry::Schema("Python")) {
      OpSchemaRegistry::NewSchema("Python", __FILE__, __LINE__)
          .NumInputs(0, OpSchema::kInf)
          .NumOutputs(0, OpSchema::kInf)
          .AllowInplace(any_inplace)
          .Arg("token", "(string) the registered Python function (core.Net.Python)")
          .Arg("pickled_builder", "(bytes) a pickled (builder, args, kwargs) making the function")
          .Arg("pickled_grad_builder", "(bytes) the same for the gradient function")
          .Arg("grad_input_indices", "(list of int) inputs the gradient function receives")
          .Arg("grad_output_indices", "(list of int) outputs whose gradients it receives");
    }
    if (!OpSchemaRegistry::Schema("PythonGradient")) {
      OpSchemaRegistry::NewSchema("PythonGradient", __FILE__, __LINE__)
          .NumInputs(0, OpSchema::kInf)
          .NumOutputs(0, OpSchema::kInf)
          .AllowInplace(any_inplace)
          .Arg("token", "(string) the forward op's token; the function is '<token>_gradient'")
          .Arg("pickled_builder", "(bytes) the forward op's builder")
          .Arg("pickled_grad_builder", "(bytes) a pickled (builder, args, kwargs) of the function")
          .Arg("grad_input_indices", "(list of int) forward inputs it receives")
          .Arg("grad_output_indices", "(list of int) forward outputs whose gradients it receives");
    }
    if (!OperatorRegistry::Find(kCPU, "Python")) {
      OperatorRegistry::Register(kCPU, "Python", detail::MakeCreator<PythonOp>());
    }
    if (!OperatorRegistry::Find(kCPU, "PythonGradient")) {
      OperatorRegistry::Register(kCPU, "PythonGradient", detail::MakeCreator<PythonGradientOp>());
    }
    if (!GradientRegistry::Has("Python")) {
      GradientRegistry::Register(
          "Python", [](const OperatorDef& def, const std::vector<GradientWrapper>& g_output) {
            return std::unique_ptr<GradientMakerBase>(new GetPythonGradient(def, g_output));
          });
    }
  });
}

// "<name>:<func.__name__>" (or the bare __name__), made unique with ":1", ":2", ...
std::string FunctionName(const py::object& func) {
  if (py::hasattr(func, "__name__")) return py::str(func.attr("__name__"));
  return py::str(py::type::of(func).attr("__name__"));
}

}  // namespace

void init_python_op(py::module& m) {
  RegisterPythonOperators();
  m.def(
      "register_python_op",
      [](const py::object& func, bool pass_workspace, std::string name) {
        C2_ENFORCE(!func.is_none(), "register_python_op needs a function, got None");
        C2_ENFORCE(PyCallable_Check(func.ptr()), "register_python_op needs a callable, got ",
                   std::string(py::str(py::type::of(func).attr("__name__"))));
        if (!name.empty()) name += ":";
        name += FunctionName(func);
        std::string token = name;
        for (int i = 1; Registry().count(token) > 0; ++i) token = name + ":" + std::to_string(i);
        Registry()[token] = PythonFunc{func, pass_workspace};
        return token;
      },
      py::arg("func"), py::arg("pass_workspace"), py::arg("name"));
  m.def(
      "register_python_gradient_op",
      [](const std::string& token, const py::object& func) {
        C2_ENFORCE(!func.is_none(), "register_python_gradient_op needs a function, got None");
        C2_ENFORCE(Registry().count(token) > 0,
                   "register_python_gradient_op: no Python operator is "
                   "registered under the token '",
                   token, "'");
        // Gradient functions never get the workspace.
        Registry()[token + "_gradient"] = PythonFunc{func, false};
      },
      py::arg("token"), py::arg("func"));
}

}  // namespace python
}  // namespace caffe2
