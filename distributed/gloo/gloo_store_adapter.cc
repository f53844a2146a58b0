#include "distributed/gloo/gloo_store_adapter.h"

namespace caffe2 {

std::vector<std::string> GlooStoreAdapter::Prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const std::string& k : keys) out.push_back(prefix_ + k);
  return out;
}

void GlooStoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  handler_->set(prefix_ + key, std::string(data.begin(), data.end()));
}

std::vector<char> GlooStoreAdapter::get(const std::string& key) {
  const std::string value = handler_->get(prefix_ + key, timeout_);
  std::vector<char> bytes(value.begin(), value.end());
  std::lock_guard<std::mutex> guard(mutex_);
  seen_[key] = bytes;
  return bytes;
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void GlooStoreAdapter::wait(const std::vector<std::string>& keys,
                            const std::chrono::milliseconds& timeout) {
  handler_->wait(Prefixed(keys), timeout.count() > 0 ? timeout : timeout_);
}

std::map<std::string, std::vector<char>> GlooStoreAdapter::values_seen() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return seen_;
}

}  // namespace caffe2
