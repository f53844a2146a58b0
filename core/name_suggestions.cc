#include "core/name_suggestions.h"

#include <algorithm>
#include <utility>

namespace caffe2 {
namespace {

// Optimal string alignment distance (Levenshtein plus swaps of adjacent characters).
size_t EditDistance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::vector<std::string> ClosestNames(const std::string& name,
                                      const std::vector<std::string>& candidates, size_t limit) {
  const size_t allowed = std::min<size_t>(3, std::max<size_t>(1, name.size() / 3));
  std::vector<std::pair<size_t, size_t>> found;  // (distance, index)
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& c = candidates[i];
    if (c == name) continue;
    const size_t longer = std::max(c.size(), name.size()),
                 shorter = std::min(c.size(), name.size());
    if (longer - shorter > allowed) continue;
    const size_t distance = EditDistance(name, c);
    if (distance <= allowed) found.emplace_back(distance, i);
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t k = 0; k < found.size() && out.size() < limit; ++k) {
    out.push_back(candidates[found[k].second]);
  }
  return out;
}

std::string DidYouMean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::vector<std::string> close = ClosestNames(name, candidates);
  if (close.empty()) return "";
  std::string out = " (did you mean ";
  for (size_t i = 0; i < close.size(); ++i) {
    if (i > 0) out += i + 1 == close.size() ? " or " : ", ";
    out += "'" + close[i] + "'";
  }
  return out + "?)";
}

}  // namespace caffe2
