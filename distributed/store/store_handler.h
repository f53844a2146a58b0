// StoreHandler: the key/value store peers rendezvous through (ops spec §3.1).
//
// Contract (all implementations):
// - set(name, data): stores bytes under `name`. The key is expected not to exist (or to hold
//   identical data); what happens otherwise depends on the backend (the file store overwrites, the
//   Redis store refuses).
// - get(name, timeout): waits for `name` (wait({name}, timeout), kDefaultTimeout unless given) and
//   returns its bytes.
// - add(name, value): atomic add; a missing key counts as 0; returns the new value (value 0 reads).
// - check(names): true iff every key exists.
// - wait(names, timeout): polls check every 10 ms until every key exists. kDefaultTimeout is 30 s;
//   kNoTimeout (0 ms) waits forever. The elapsed time is measured in whole seconds, so the
//   effective timeout is `timeout` rounded up by up to one second. On expiry it throws
//   StoreHandlerTimeoutException, whose message is "Wait timeout for name(s): <missing keys>".
//
// Extension (not upstream): setIfAbsent(name, data) stores only when the key does not exist yet and
// says whether it did; the file store does it atomically with link(2), the Redis store with SETNX.
// Rendezvous uses it to detect duplicate shard ids and reused run ids.
//
// A blob holds a handler as StoreHandlerPtr (shared, so that common worlds built on a handler keep
// it alive). Implementations are thread-safe.
#pragma once

#include "core/enforce.h"

#include <chrono>
#include <memory>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace caffe2 {

// Thrown by StoreHandler::wait (and so get) when keys do not arrive in time. Python sees it as
// caffe2.distributed.python.StoreHandlerTimeoutError, a RuntimeError.
class StoreHandlerTimeoutException : public EnforceNotMet {
 public:
  using EnforceNotMet::EnforceNotMet;
};
using StoreHandlerTimeoutError = StoreHandlerTimeoutException;

// Every timeout message starts with this.
constexpr const char* kStoreTimeoutMessagePrefix = "Wait timeout for name(s): ";

class StoreHandler {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(30);
  static constexpr std::chrono::milliseconds kNoTimeout = std::chrono::milliseconds::zero();

  virtual ~StoreHandler() = default;

  virtual void set(const std::string& name, const std::string& data) = 0;
  virtual std::string get(const std::string& name,
                          std::chrono::milliseconds timeout = kDefaultTimeout) = 0;
  virtual int64_t add(const std::string& name, int64_t value) = 0;
  virtual bool check(const std::vector<std::string>& names) = 0;
  virtual void wait(const std::vector<std::string>& names,
                    std::chrono::milliseconds timeout = kDefaultTimeout) = 0;
  virtual bool setIfAbsent(const std::string& name, const std::string& data) = 0;
  // Extension, for diagnostics: (namespace, value) for each other namespace (prefix, i.e. run id)
  // of the same store in which `name` exists. A rendezvous that times out uses it to tell a peer
  // that joined under another run id from one that never came. The default knows of none. Redis
  // prefixes have no separator, so there a namespace is any key prefix followed by `name`.
  virtual std::vector<std::pair<std::string, std::string>> OtherNamespacesHolding(
      const std::string& name) {
    return {};
  }

 protected:
  // The shared polling loop of wait: check(names) every 10 ms; on expiry throws
  // StoreHandlerTimeoutException naming the keys that are still missing.
  void PollUntilPresent(const std::vector<std::string>& names, std::chrono::milliseconds timeout);
};

using StoreHandlerPtr = std::shared_ptr<StoreHandler>;

}  // namespace caffe2
