#include "core/name_suggestions.h"

#include <gtest/gtest.h>

namespace caffe2 {
namespace {

TEST(NameSuggestions, ClosestFirstWithinAThirdOfTheLength) {
  const std::vector<std::string> names = {"kernel", "kernel_h", "stride", "pad", "kernels"};
  EXPECT_EQ(ClosestNames("kernal", names), (std::vector<std::string>{"kernel", "kernels"}));
  EXPECT_EQ(ClosestNames("kernle", names).front(), "kernel");  // a swap counts once
  EXPECT_TRUE(ClosestNames("dilation", names).empty());
  EXPECT_TRUE(ClosestNames("kernel", {"kernel"}).empty());  // the name itself is no suggestion
}

TEST(NameSuggestions, ShortNamesAllowOneEditAndTheListIsCapped) {
  EXPECT_EQ(ClosestNames("pda", {"pad", "pod", "pea"}), (std::vector<std::string>{"pad", "pea"}));
  EXPECT_EQ(ClosestNames("w1", {"w2", "w3", "w4", "w5"}, 2).size(), 2u);
}

TEST(NameSuggestions, DidYouMeanPhrases) {
  EXPECT_EQ(DidYouMean("fc1_x", {"fc1_w", "fc1_b"}), " (did you mean 'fc1_w' or 'fc1_b'?)");
  EXPECT_EQ(DidYouMean("loss", {"lost"}), " (did you mean 'lost'?)");
  EXPECT_EQ(DidYouMean("loss", {"accuracy"}), "");
}

}  // namespace
}  // namespace caffe2
