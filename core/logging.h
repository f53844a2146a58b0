// Minimal leveled logging to stderr, controlled by --caffe2_log_level
// (0 INFO, 1 WARNING, 2 ERROR (default), 3 FATAL; negative values are verbose levels).
#pragma once

#include <sstream>

namespace caffe2 {

enum LogSeverity { kInfo = 0, kWarning = 1, kError = 2, kFatal = 3 };

int LogLevel();
void SetLogLevel(int level);
// True when --caffe2_verbose_errors is set: errors then carry the C++ file and line.
bool VerboseErrorsEnabled();

class LogMessage {
 public:
  LogMessage(const char* file, int line, int severity);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  int severity_;
  std::ostringstream stream_;
};

}  // namespace caffe2

#define C2_LOG(severity)                              \
  if (::caffe2::k##severity < ::caffe2::LogLevel()) { \
  } else                                              \
    ::caffe2::LogMessage(__FILE__, __LINE__, ::caffe2::k##severity).stream()
