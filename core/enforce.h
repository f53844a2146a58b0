// Errors: every failure in the runtime is a caffe2::EnforceNotMet (a std::exception) whose message
// names what failed and the values involved. The Python bridge turns it into RuntimeError.
#pragma once

#include <sstream>
#include <exception>
#include <string>

namespace caffe2 {

// Subclasses (a store timeout, an unsupported engine feature) keep their type through the operator
// and net layers: those add context to the message and rethrow the same object.
class EnforceNotMet : public std::exception {
 public:
  explicit EnforceNotMet(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  void set_message(std::string msg) { msg_ = std::move(msg); }

 private:
  std::string msg_;
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

[[noreturn]] void ThrowEnforce(const char* file, int line, const char* cond,
                               const std::string& msg);

}  // namespace caffe2

// C2_ENFORCE(cond, parts...) throws EnforceNotMet with the parts streamed together when cond is
// false.
#define C2_ENFORCE(cond, ...)                                                               \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      ::caffe2::ThrowEnforce(__FILE__, __LINE__, #cond, ::caffe2::MakeString(__VA_ARGS__)); \
    }                                                                                       \
  } while (0)

// C2_THROW(parts...) always throws.
#define C2_THROW(...) \
  ::caffe2::ThrowEnforce(__FILE__, __LINE__, nullptr, ::caffe2::MakeString(__VA_ARGS__))
