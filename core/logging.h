// Leveled logging through glog (Debian's libgoogle-glog), controlled by --caffe2_log_level:
// 0 INFO, 1 WARNING, 2 ERROR (the default), 3 FATAL; a negative level -n also prints
// C2_VLOG(1..n). Lines have glog's prefix ("I20261127 23:07:51.123456 4242 net.cc:40] ..."),
// go to stderr (never to log files), and a FATAL line does not abort (errors are exceptions here).
// An application that initialized glog itself keeps its settings; caffe2 only adds lines.
#pragma once

#include <sstream>

namespace caffe2 {

enum LogSeverity { kInfo = 0, kWarning = 1, kError = 2, kFatal = 3 };

int LogLevel();
void SetLogLevel(int level);
// True when --caffe2_verbose_errors is set: errors then carry the C++ file and line.
bool VerboseErrorsEnabled();

// Collects one line and hands it to glog when destroyed.
class LogMessage {
 public:
  LogMessage(const char* file, int line, int severity);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  const char* file_;
  int line_;
  int severity_;
  std::ostringstream stream_;
};

}  // namespace caffe2

#define C2_LOG(severity)                              \
  if (::caffe2::k##severity < ::caffe2::LogLevel()) { \
  } else                                              \
    ::caffe2::LogMessage(__FILE__, __LINE__, ::caffe2::k##severity).stream()

// Verbose INFO line of level n >= 1, printed when --caffe2_log_level <= -n.
#define C2_VLOG(n)                   \
  if (-(n) < ::caffe2::LogLevel()) { \
  } else                             \
    ::caffe2::LogMessage(__FILE__, __LINE__, ::caffe2::kInfo).stream()
