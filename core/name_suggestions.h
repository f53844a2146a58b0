// "Did you mean": the names among `candidates` closest to a misspelt or missing `name`, for error
// messages (a missing blob, net or argument). Close means an edit distance (insertions, deletions,
// substitutions, swaps of neighbours) of at most a third of the name's length, at least 1 and at
// most 3; at most `limit` names, closest first, ties in the candidates' order.
#pragma once
#include <string>
#include <vector>

namespace caffe2 {

std::vector<std::string> ClosestNames(const std::string& name,
                                      const std::vector<std::string>& candidates, size_t limit = 3);

// ", did you mean 'a' or 'b'?" style suffix: "" when nothing is close, else " (did you mean 'a',
// 'b' or 'c'?)".
std::string DidYouMean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace caffe2
