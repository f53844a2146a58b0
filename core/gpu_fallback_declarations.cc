#include "core/gpu_fallback_declarations.h"

#include <algorithm>
#include <mutex>

#include "core/enforce.h"

namespace caffe2 {
namespace {

struct Declarations {
  std::mutex mutex;
  std::vector<std::string> types;
  std::function<void(const std::string&)> register_fallback;
};

Declarations& TheDeclarations() {
  static Declarations* declarations = new Declarations();  // never destroyed: used at exit too
  return *declarations;
}

}  // namespace

bool DeclareGpuFallback(const std::string& type) {
  Declarations& d = TheDeclarations();
  std::function<void(const std::string&)> register_now;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    C2_ENFORCE(std::find(d.types.begin(), d.types.end(), type) == d.types.end(),
               "a GPU fallback for operator type '", type, "' is declared twice");
    d.types.push_back(type);
    register_now = d.register_fallback;
  }
  if (register_now) register_now(type);
  return true;
}

std::vector<std::string> DeclaredGpuFallbacks() {
  Declarations& d = TheDeclarations();
  std::lock_guard<std::mutex> lock(d.mutex);
  std::vector<std::string> types = d.types;
  std::sort(types.begin(), types.end());
  return types;
}

void OnGpuFallbackDeclared(std::function<void(const std::string&)> register_fallback) {
  Declarations& d = TheDeclarations();
  std::vector<std::string> declared;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    C2_ENFORCE(!d.register_fallback, "the GPU fallbacks are registered by one backend, once");
    d.register_fallback = register_fallback;
    declared = d.types;
  }
  for (const std::string& type : declared) register_fallback(type);
}

}  // namespace caffe2
