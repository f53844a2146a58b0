#include <gtest/gtest.h>

#include "core/enforce.h"
#include "core/flags.h"
#include "core/init.h"
#include "core/logging.h"

C2_DEFINE_int(caffe2_test_int_flag, 5, "A flag for tests");
C2_DEFINE_string(caffe2_test_string_flag, "a", "A flag for tests");
C2_DEFINE_bool(caffe2_test_bool_flag, false, "A flag for tests");

namespace caffe2 {

TEST(Flags, ParsesEveryForm) {
  std::vector<std::string> rest;
  ParseFlags({"--caffe2_test_int_flag=7", "--caffe2_test_string_flag", "hello",
              "--caffe2_test_bool_flag", "positional", "--other_tool_flag=1"},
             &rest);
  EXPECT_EQ(FLAGS_caffe2_test_int_flag, 7);
  EXPECT_EQ(FLAGS_caffe2_test_string_flag, "hello");
  EXPECT_TRUE(FLAGS_caffe2_test_bool_flag);
  EXPECT_EQ(rest, (std::vector<std::string>{"positional", "--other_tool_flag=1"}));
  ParseFlags({"--nocaffe2_test_bool_flag"}, nullptr);
  EXPECT_FALSE(FLAGS_caffe2_test_bool_flag);
  EXPECT_EQ(FlagValue("caffe2_test_int_flag"), "7");
}

TEST(Flags, RejectsUnknownAndMalformed) {
  EXPECT_THROW(ParseFlags({"--caffe2_no_such_flag=1"}, nullptr), EnforceNotMet);
  EXPECT_THROW(ParseFlags({"--caffe2_test_int_flag=abc"}, nullptr), EnforceNotMet);
  EXPECT_THROW(ParseFlags({"--caffe2_test_int_flag=99999999999"}, nullptr), EnforceNotMet);
  EXPECT_THROW(SetFlag("caffe2_test_bool_flag", "maybe"), EnforceNotMet);
}

TEST(GlobalInit, SetsLogLevelAndIsIdempotent) {
  GlobalInit({"prog", "--caffe2_log_level=1"});
  EXPECT_EQ(LogLevel(), 1);
  EXPECT_TRUE(GlobalInitAlreadyRun());
  GlobalInit({"prog", "--caffe2_log_level=2"});  // flags still parsed on later calls
  EXPECT_EQ(LogLevel(), 2);
  EXPECT_THROW(GlobalInit({"prog", "--caffe2_log_level=x"}), EnforceNotMet);
}

}  // namespace caffe2
