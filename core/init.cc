#include "core/init.h"

#include <mutex>
#include <utility>

#include "core/enforce.h"
#include "core/flags.h"
#include "core/logging.h"

namespace caffe2 {
namespace {

std::mutex& InitMutex() {
  static std::mutex m;
  return m;
}
bool& InitDone() {
  static bool done = false;
  return done;
}
std::vector<std::pair<void (*)(), const char*>>& InitFunctions() {
  static auto* fns = new std::vector<std::pair<void (*)(), const char*>>();
  return *fns;
}

}  // namespace

bool RegisterInitFunction(void (*fn)(), const char* description) {
  InitFunctions().emplace_back(fn, description);
  return true;
}

bool GlobalInitAlreadyRun() {
  std::lock_guard<std::mutex> lock(InitMutex());
  return InitDone();
}

void GlobalInit(const std::vector<std::string>& args) {
  std::lock_guard<std::mutex> lock(InitMutex());
  std::vector<std::string> flags(args.begin() + (args.empty() ? 0 : 1), args.end());
  ParseFlags(flags, nullptr);
  if (InitDone()) return;
  for (const auto& fn : InitFunctions()) {
    try {
      fn.first();
    } catch (const std::exception& e) {
      C2_THROW("Init function '", fn.second, "' failed: ", e.what());
    }
  }
  InitDone() = true;
}

}  // namespace caffe2
