// GlooStoreAdapter: Gloo's rendezvous::Store interface over our StoreHandler, with a key prefix
// (Gloo's PrefixStore scheme: key k is stored as "<prefix>/k"). Values are kept as they pass, so
// that the rendezvous can tell later which peer listened where.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "distributed/store/store_handler.h"

namespace caffe2 {

class GlooStoreAdapter final : public gloo::rendezvous::Store {
 public:
  GlooStoreAdapter(StoreHandler* handler, const std::string& prefix,
                   std::chrono::milliseconds timeout)
      : handler_(handler), prefix_(prefix + "/"), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  // The values read so far, by (unprefixed) key.
  std::map<std::string, std::vector<char>> values_seen() const;

 private:
  std::vector<std::string> Prefixed(const std::vector<std::string>& keys) const;

  StoreHandler* handler_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<char>> seen_;
};

}  // namespace caffe2
