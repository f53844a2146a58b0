// Stub picked by CMake when the Redis store is not built (C2_USE_REDIS off or hiredis missing).
#include "core/enforce.h"
#include "distributed/store/redis_store_handler.h"

namespace caffe2 {

std::unique_ptr<StoreHandler> CreateRedisStoreHandler(const std::string& host, int port,
                                                      const std::string& prefix,
                                                      std::chrono::milliseconds) {
  C2_THROW("not built with Redis: cannot connect to ", host, ":", port,
           " (rebuild with -DC2_USE_REDIS=ON and libhiredis-dev installed, or use "
           "FileStoreHandlerCreate)");
}

}  // namespace caffe2
