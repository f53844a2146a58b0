// RedisStoreHandler: a StoreHandler on a Redis server through hiredis (ops spec §3.3).
//
// Key = prefix + name (plain concatenation). set is SETNX: a key that already exists is an error
// ("Value at <name> was already set (perhaps you reused a run ID you have used before?)"). get
// waits then GETs; add is INCRBY; check is EXISTS k1 k2 ... compared with the number of names.
// Keys are never deleted or expired.
//
// Connecting waits at most 5 s (or `timeout` when shorter) and an unreachable server is an error
// naming host:port. A command that gets no answer within `timeout` (30 s by default; the op's
// timeout_ms) is an error naming host:port and the command, without a retry (a server that accepts
// connections but never replies would otherwise block twice as long); a command that fails on a
// broken connection reconnects once and retries.
//
// When the build has no hiredis (C2_USE_REDIS off or the library missing) CreateRedisStoreHandler
// comes from no_redis.cc and throws "not built with Redis".
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "distributed/store/store_handler.h"

namespace caffe2 {

std::unique_ptr<StoreHandler> CreateRedisStoreHandler(
    const std::string& host, int port, const std::string& prefix,
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace caffe2
