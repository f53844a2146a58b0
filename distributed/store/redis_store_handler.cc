#include "distributed/store/redis_store_handler.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <vector>

#include "core/enforce.h"

namespace caffe2 {
namespace {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

class RedisStoreHandler final : public StoreHandler {
 public:
  RedisStoreHandler(const std::string& host, int port, const std::string& prefix,
                    std::chrono::milliseconds timeout)
      : host_(host), port_(port), prefix_(prefix), timeout_(timeout) {
    Connect();
  }
  ~RedisStoreHandler() override {
    if (ctx_) redisFree(ctx_);
  }

  void set(const std::string& name, const std::string& data) override {
    C2_ENFORCE(setIfAbsent(name, data), "Value at ", name,
               " was already set (perhaps you reused a run ID you have used before?)");
  }

  bool setIfAbsent(const std::string& name, const std::string& data) override {
    const std::string key = prefix_ + name;
    Reply reply = Command({"SETNX", key, data}, name);
    C2_ENFORCE(reply->type == REDIS_REPLY_INTEGER, "Redis SETNX on '", key,
               "' returned an unexpected reply ", Describe(reply.get()));
    return reply->integer == 1;
  }

  std::string get(const std::string& name, std::chrono::milliseconds timeout) override {
    wait({name}, timeout);
    const std::string key = prefix_ + name;
    Reply reply = Command({"GET", key}, name);
    C2_ENFORCE(reply->type == REDIS_REPLY_STRING, "Redis GET on '", key, "' returned ",
               Describe(reply.get()), " instead of a string");
    return std::string(reply->str, reply->len);
  }

  int64_t add(const std::string& name, int64_t value) override {
    const std::string key = prefix_ + name;
    Reply reply = Command({"INCRBY", key, std::to_string(value)}, name);
    C2_ENFORCE(reply->type == REDIS_REPLY_INTEGER, "Redis INCRBY on '", key,
               "' failed: ", Describe(reply.get()));
    return reply->integer;
  }

  bool check(const std::vector<std::string>& names) override {
    if (names.empty()) return true;
    std::vector<std::string> args{"EXISTS"};
    for (const std::string& name : names) args.push_back(prefix_ + name);
    Reply reply = Command(args, names.front());
    C2_ENFORCE(reply->type == REDIS_REPLY_INTEGER, "Redis EXISTS returned ", Describe(reply.get()));
    return reply->integer == static_cast<long long>(names.size());
  }

  void wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout) override {
    PollUntilPresent(names, timeout);
  }

  std::vector<std::pair<std::string, std::string>> OtherNamespacesHolding(
      const std::string& name) override {
    std::string pattern = "*";
    for (char c : name) {
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
      pattern += c;
    }
    std::vector<std::pair<std::string, std::string>> out;
    std::string cursor = "0";
    do {
      Reply reply = Command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, name);
      if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) break;
      cursor.assign(reply->element[0]->str, reply->element[0]->len);
      const redisReply* keys = reply->element[1];
      for (size_t i = 0; i < keys->elements; ++i) {
        const std::string key(keys->element[i]->str, keys->element[i]->len);
        if (key.size() < name.size()) continue;
        const std::string prefix = key.substr(0, key.size() - name.size());
        if (prefix == prefix_) continue;
        Reply value = Command({"GET", key}, name);
        if (value->type == REDIS_REPLY_STRING) {
          out.emplace_back(prefix, std::string(value->str, value->len));
        }
      }
    } while (cursor != "0");
    return out;
  }

 private:
  std::string Address() const { return host_ + ":" + std::to_string(port_); }

  void Connect() {
    if (ctx_) {
      redisFree(ctx_);
      ctx_ = nullptr;
    }
    const struct timeval connect_timeout =
        TimeVal(std::min<std::chrono::milliseconds>(timeout_, std::chrono::seconds(5)));
    redisContext* ctx = redisConnectWithTimeout(host_.c_str(), port_, connect_timeout);
    if (ctx == nullptr) C2_THROW("Cannot connect to Redis at ", Address(), ": out of memory");
    if (ctx->err) {
      std::string err = ctx->errstr;
      redisFree(ctx);
      C2_THROW("Cannot connect to Redis at ", Address(), ": ", err,
               " (is redis-server running there and reachable?)");
    }
    redisSetTimeout(ctx, TimeVal(timeout_));
    ctx_ = ctx;
  }

  static struct timeval TimeVal(std::chrono::milliseconds ms) {
    return {static_cast<time_t>(ms.count() / 1000),
            static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
  }

  // Runs one command; on a connection error reconnects once and retries. Error replies throw.
  Reply Command(const std::vector<std::string>& args, const std::string& name) {
    std::lock_guard<std::mutex> guard(mutex_);
    std::vector<const char*> argv;
    std::vector<size_t> argl;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      argl.push_back(a.size());
    }
    for (int attempt = 0;; ++attempt) {
      if (ctx_ == nullptr) Connect();
      auto* raw = static_cast<redisReply*>(
          redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), argl.data()));
      if (raw != nullptr) {
        Reply reply(raw);
        C2_ENFORCE(reply->type != REDIS_REPLY_ERROR, "Redis at ", Address(), " refused ", args[0],
                   " for key '", name, "': ", std::string(reply->str, reply->len));
        return reply;
      }
      std::string err = ctx_->errstr;
      const bool timed_out = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
      redisFree(ctx_);
      ctx_ = nullptr;
      C2_ENFORCE(!timed_out, "Redis at ", Address(), " did not answer ", args[0], " for key '",
                 name, "' within ", timeout_.count(),
                 " ms (does a Redis server listen there, and is it stuck?)");
      if (attempt >= 1) {
        C2_THROW("Redis ", args[0], " for key '", name, "' failed: lost the connection to ",
                 Address(), ": ", err);
      }
    }
  }

  static std::string Describe(const redisReply* r) {
    switch (r->type) {
      case REDIS_REPLY_STRING:
        return "a string";
      case REDIS_REPLY_INTEGER:
        return "the integer " + std::to_string(r->integer);
      case REDIS_REPLY_NIL:
        return "nil (no such key)";
      case REDIS_REPLY_ARRAY:
        return "an array";
      case REDIS_REPLY_STATUS:
        return "status " + std::string(r->str, r->len);
      default:
        return "reply type " + std::to_string(r->type);
    }
  }

  std::string host_;
  int port_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
  redisContext* ctx_ = nullptr;
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<StoreHandler> CreateRedisStoreHandler(const std::string& host, int port,
                                                      const std::string& prefix,
                                                      std::chrono::milliseconds timeout) {
  return std::make_unique<RedisStoreHandler>(host, port, prefix, timeout);
}

}  // namespace caffe2
