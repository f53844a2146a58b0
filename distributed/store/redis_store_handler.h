// RedisStoreHandler: a StoreHandler on a Redis server through hiredis (ops spec §3.3).
//
// Key = prefix + name (plain concatenation). set is SETNX: a key that already exists is an error
// ("Value at <name> was already set (perhaps you reused a run ID you have used before?)"). get
// waits then GETs; add is INCRBY; check is EXISTS k1 k2 ... compared with the number of names.
// Keys are never deleted or expired.
//
// Connecting uses a 5 s timeout and an unreachable server is an error naming host:port. Commands
// time out after 30 s; a command that fails on a broken connection reconnects once and retries.
//
// When the build has no hiredis (C2_USE_REDIS off or the library missing) CreateRedisStoreHandler
// comes from no_redis.cc and throws "not built with Redis".
#pragma once

#include <memory>
#include <string>

#include "distributed/store/store_handler.h"

namespace caffe2 {

std::unique_ptr<StoreHandler> CreateRedisStoreHandler(const std::string& host, int port,
                                                      const std::string& prefix);

}  // namespace caffe2
