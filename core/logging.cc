#include "core/logging.h"

#include <mutex>

#include <glog/logging.h>

#include "core/flags.h"

C2_DEFINE_int(caffe2_log_level, 2,
              "Minimum severity printed: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL; -n also prints the "
              "verbose lines of levels 1..n.");
C2_DEFINE_bool(caffe2_verbose_errors, false, "Append the C++ source location to error messages.");

namespace caffe2 {
namespace {

// glog writes to stderr only, and is initialized once unless the application did it already.
void PrepareGlog() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!google::IsGoogleLoggingInitialized()) {
      FLAGS_logtostderr = true;
      google::InitGoogleLogging("caffe2");
    }
  });
}

google::LogSeverity GlogSeverity(int severity) {
  // FATAL would abort the process in glog; caffe2 reports failures as exceptions instead.
  if (severity >= kError) return google::GLOG_ERROR;
  return severity == kWarning ? google::GLOG_WARNING : google::GLOG_INFO;
}

}  // namespace

int LogLevel() { return FLAGS_caffe2_log_level; }
void SetLogLevel(int level) { FLAGS_caffe2_log_level = level; }
bool VerboseErrorsEnabled() { return FLAGS_caffe2_verbose_errors; }

LogMessage::LogMessage(const char* file, int line, int severity)
    : file_(file), line_(line), severity_(severity) {}

LogMessage::~LogMessage() {
  PrepareGlog();
  google::LogMessage(file_, line_, GlogSeverity(severity_)).stream()
      << (severity_ >= kFatal ? "FATAL: " : "") << stream_.str();
}

}  // namespace caffe2
