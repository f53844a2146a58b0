// Errors: every failure in the runtime is a caffe2::EnforceNotMet (a std::exception) whose message
// names what failed and the values involved. The Python bridge turns it into RuntimeError.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace caffe2 {

class EnforceNotMet : public std::runtime_error {
 public:
  explicit EnforceNotMet(const std::string& msg) : std::runtime_error(msg) {}
};

namespace detail {
inline void StreamAll(std::ostringstream&) {}
template <class T, class... Rest>
void StreamAll(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  StreamAll(os, rest...);
}
}  // namespace detail

// Concatenates the arguments with operator<<.
template <class... Args>
std::string MakeString(const Args&... args) {
  std::ostringstream os;
  detail::StreamAll(os, args...);
  return os.str();
}

[[noreturn]] void ThrowEnforce(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace caffe2

// C2_ENFORCE(cond, parts...) throws EnforceNotMet with the parts streamed together when cond is false.
#define C2_ENFORCE(cond, ...)                                                        \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      ::caffe2::ThrowEnforce(__FILE__, __LINE__, #cond, ::caffe2::MakeString(__VA_ARGS__)); \
    }                                                                                \
  } while (0)

// C2_THROW(parts...) always throws.
#define C2_THROW(...) ::caffe2::ThrowEnforce(__FILE__, __LINE__, nullptr, ::caffe2::MakeString(__VA_ARGS__))
