#include "distributed/store/store_handler.h"

#include <thread>

#include "core/enforce.h"

namespace caffe2 {

constexpr std::chrono::milliseconds StoreHandler::kDefaultTimeout;
constexpr std::chrono::milliseconds StoreHandler::kNoTimeout;

void StoreHandler::PollUntilPresent(const std::vector<std::string>& names,
                                    std::chrono::milliseconds timeout) {
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  const auto start = std::chrono::steady_clock::now();
  while (!check(names)) {
    // Whole seconds, as upstream: a 1 s timeout may take up to 2 s to fire.
    const auto elapsed = duration_cast<seconds>(std::chrono::steady_clock::now() - start);
    if (timeout != kNoTimeout && elapsed > timeout) {
      std::string missing;
      size_t count = 0;
      for (const std::string& name : names) {
        if (check({name})) continue;
        if (++count <= 8) missing += (missing.empty() ? "" : ", ") + name;
      }
      if (count > 8) missing += MakeString(", ... (", count, " keys)");
      // A key may have arrived between the two checks: then nothing is missing any more.
      if (missing.empty()) return;
      throw StoreHandlerTimeoutException(
          MakeString(kStoreTimeoutMessagePrefix, missing, " (waited ", elapsed.count(), " s for ",
                     names.size(), " key(s); timeout ", timeout.count(), " ms)"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace caffe2
