#include "core/logging.h"

#include <atomic>
#include <cstring>
#include <iostream>

#include "core/flags.h"

C2_DEFINE_int(caffe2_log_level, 2,
              "Minimum severity printed: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL.");
C2_DEFINE_bool(caffe2_verbose_errors, false, "Append the C++ source location to error messages.");

namespace caffe2 {

int LogLevel() { return FLAGS_caffe2_log_level; }
void SetLogLevel(int level) { FLAGS_caffe2_log_level = level; }
bool VerboseErrorsEnabled() { return FLAGS_caffe2_verbose_errors; }

LogMessage::LogMessage(const char* file, int line, int severity) : severity_(severity) {
  static const char kLetters[] = "IWEF";
  const char* base = std::strrchr(file, '/');
  stream_ << kLetters[severity < 0 ? 0 : (severity > 3 ? 3 : severity)] << " "
          << (base ? base + 1 : file) << ":" << line << "] ";
}

LogMessage::~LogMessage() {
  stream_ << "\n";
  std::cerr << stream_.str() << std::flush;
}

}  // namespace caffe2
