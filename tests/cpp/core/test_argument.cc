#include <gtest/gtest.h>

#include "core/argument.h"
#include "core/enforce.h"
#include "test_helpers.h"

namespace caffe2 {
using testing::Op;

TEST(ArgumentHelper, TypingIsStrict) {
  OperatorDef def = Op(
      "X", {}, {},
      {MakeArgument("f", 1.5f), MakeArgument<int64_t>("i", 3),
       MakeArgument<std::string>("s", "text"), MakeArgument("ints", std::vector<int64_t>{1, 2})});
  ArgumentHelper args(def);
  EXPECT_FLOAT_EQ(args.GetSingleArgument<float>("f", 0.f), 1.5f);
  EXPECT_EQ(args.GetSingleArgument<int>("i", 0), 3);
  EXPECT_EQ(args.GetSingleArgument<bool>("i", false), true);
  EXPECT_EQ(args.GetSingleArgument<std::string>("s", ""), "text");
  EXPECT_EQ(args.GetSingleArgument<int>("missing", 9), 9);
  EXPECT_EQ(args.GetRepeatedArgument<int>("ints"), (std::vector<int>{1, 2}));
  EXPECT_TRUE(args.HasSingleArgumentOfType<float>("f"));
  EXPECT_FALSE(args.HasSingleArgumentOfType<int>("f"));
  try {
    args.GetSingleArgument<float>("i", 0.f);
    FAIL();
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(
        std::string(e.what()).find("Argument 'i' does not have the right field: expected field f"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(args.GetSingleArgument<int>("f", 0), EnforceNotMet);
  EXPECT_THROW(args.GetSingleArgument<std::string>("i", ""), EnforceNotMet);
}

TEST(ArgumentHelper, IntegerRangeIsChecked) {
  OperatorDef def = Op("X", {}, {}, {MakeArgument<int64_t>("big", int64_t{1} << 40)});
  ArgumentHelper args(def);
  EXPECT_EQ(args.GetSingleArgument<int64_t>("big", 0), int64_t{1} << 40);
  EXPECT_THROW(args.GetSingleArgument<int>("big", 0), EnforceNotMet);
}

TEST(ArgumentHelper, DuplicatesMustAgree) {
  OperatorDef same =
      Op("X", {}, {}, {MakeArgument<int64_t>("a", 1), MakeArgument<int64_t>("a", 1)});
  EXPECT_NO_THROW(ArgumentHelper{same});
  OperatorDef differ =
      Op("X", {}, {}, {MakeArgument<int64_t>("a", 1), MakeArgument<int64_t>("a", 2)});
  EXPECT_THROW(ArgumentHelper{differ}, EnforceNotMet);
}

TEST(ArgumentHelper, ListsHoldTheirKindOrNothing) {
  Argument s;
  s.set_name("shape");
  s.set_s("abc");
  Argument empty;
  empty.set_name("empty");
  Argument ints;
  ints.set_name("scales");
  ints.add_ints(1);
  ints.add_ints(2);
  OperatorDef def = Op("X", {}, {}, {s, empty, ints, MakeArgument<int64_t>("scalar", 3)});
  ArgumentHelper args(def);
  try {
    args.GetRepeatedArgument<int64_t>("shape");
    FAIL();
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "Argument 'shape' does not have the right field: expected the list "
                  "field ints, got s 'abc'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(args.GetRepeatedArgument<int>("scalar"), EnforceNotMet);
  EXPECT_THROW(args.GetRepeatedArgument<float>("shape"), EnforceNotMet);
  EXPECT_THROW(args.GetRepeatedArgument<std::string>("scales"), EnforceNotMet);
  EXPECT_TRUE(args.GetRepeatedArgument<int>("empty").empty());
  EXPECT_TRUE(args.GetRepeatedArgument<std::string>("empty").empty());
  // Integers are accepted for a list of floats ([1, 2] written for [1.0, 2.0]).
  EXPECT_EQ(args.GetRepeatedArgument<float>("scales"), (std::vector<float>{1.f, 2.f}));
}

}  // namespace caffe2
