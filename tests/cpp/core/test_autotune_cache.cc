// The autotune cache (core/autotune_cache.h): records in memory and in the cache file, the first
// record of a key winning, other machines' records ignored, and the generation that tells kernels
// to drop their plans.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/autotune_cache.h"
#include "core/enforce.h"
#include "core/flags.h"

namespace caffe2 {
namespace {

// Points --caffe2_autotune_cache at a fresh file for one test and back at nothing afterwards.
class AutotuneCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "autotune_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::remove(path_.c_str());
    SetFlag("caffe2_autotune_cache", path_);
    AutotuneForget();
  }
  void TearDown() override {
    SetFlag("caffe2_autotune_cache", "");
    SetFlag("caffe2_exhaustive_search", "false");
    AutotuneForget();
    std::remove(path_.c_str());
  }
  std::string FileText() const {
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void Append(const std::string& text) const {
    std::ofstream out(path_, std::ios::app);
    out << text;
  }
  std::string path_;
};

TEST_F(AutotuneCacheTest, RecordsAreKeptAndWrittenWithTheMachine) {
  EXPECT_FALSE(AutotuneLookup("conv fwd A").has_value());
  AutotuneRecord("conv fwd A", "winograd");
  EXPECT_EQ(AutotuneLookup("conv fwd A").value(), "winograd");
  EXPECT_EQ(FileText(), AutotuneMachine() + "\tconv fwd A\twinograd\n");
}

TEST_F(AutotuneCacheTest, AnotherProcessReadsTheFile) {
  AutotuneRecord("conv fwd A", "blocked");
  AutotuneForget();  // as a new process: nothing in memory
  EXPECT_EQ(AutotuneLookup("conv fwd A").value(), "blocked");
}

TEST_F(AutotuneCacheTest, TheFirstRecordOfAKeyWins) {
  Append(AutotuneMachine() + "\tk\tgemm\n" + AutotuneMachine() + "\tk\tdirect\n");
  EXPECT_EQ(AutotuneLookup("k").value(), "gemm");
  AutotuneRecord("k", "winograd");  // a later record does not replace it, nor is it written
  EXPECT_EQ(AutotuneLookup("k").value(), "gemm");
  EXPECT_EQ(FileText().find("winograd"), std::string::npos);
}

TEST_F(AutotuneCacheTest, RecordsAppearingLaterInTheFileAreFound) {
  EXPECT_FALSE(AutotuneLookup("k").has_value());
  Append(AutotuneMachine() + "\tk\tdirect\n");  // another process tuned k meanwhile
  EXPECT_EQ(AutotuneLookup("k").value(), "direct");
}

TEST_F(AutotuneCacheTest, OtherMachinesAndTornLinesAreIgnored) {
  Append("# a comment\nOther CPU +avx2\tk\tdirect\n" + AutotuneMachine() +
         "\ttorn line without a choice\n");
  EXPECT_FALSE(AutotuneLookup("k").has_value());
  EXPECT_FALSE(AutotuneLookup("torn line without a choice").has_value());
}

TEST_F(AutotuneCacheTest, WithoutAFileRecordsLiveInMemoryOnly) {
  SetFlag("caffe2_autotune_cache", "");
  AutotuneRecord("k", "gemm");
  EXPECT_EQ(AutotuneLookup("k").value(), "gemm");
  AutotuneForget();
  EXPECT_FALSE(AutotuneLookup("k").has_value());
  EXPECT_EQ(FileText(), "");
}

TEST_F(AutotuneCacheTest, GenerationChangesWithThePathAndOnForget) {
  const uint64_t g0 = AutotuneGeneration();
  EXPECT_EQ(AutotuneGeneration(), g0);
  AutotuneRecord("k", "gemm");
  EXPECT_EQ(AutotuneGeneration(), g0);  // a record adds a choice, it changes none
  SetFlag("caffe2_autotune_cache", path_ + ".other");
  const uint64_t g1 = AutotuneGeneration();
  EXPECT_NE(g1, g0);
  EXPECT_FALSE(AutotuneLookup("k").has_value());  // the other file has no records
  AutotuneForget();
  EXPECT_NE(AutotuneGeneration(), g1);
  std::remove((path_ + ".other").c_str());
}

TEST_F(AutotuneCacheTest, TabsAndNewlinesAreRefused) {
  EXPECT_THROW(AutotuneRecord("a\tb", "gemm"), EnforceNotMet);
  EXPECT_THROW(AutotuneRecord("k", "gemm\n"), EnforceNotMet);
}

TEST_F(AutotuneCacheTest, AnUnwritableFileIsAClearError) {
  SetFlag("caffe2_autotune_cache", "/nonexistent-dir/autotune.txt");
  try {
    AutotuneRecord("k", "gemm");
    FAIL() << "expected an error";
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/autotune.txt"), std::string::npos)
        << e.what();
  }
}

TEST_F(AutotuneCacheTest, ExhaustiveSearchIsTheArgumentOrTheFlag) {
  EXPECT_FALSE(ExhaustiveSearchEnabled(false));
  EXPECT_TRUE(ExhaustiveSearchEnabled(true));
  SetFlag("caffe2_exhaustive_search", "true");
  EXPECT_TRUE(ExhaustiveSearchEnabled(false));
}

TEST(AutotuneMachine, NamesTheCpu) {
  EXPECT_FALSE(AutotuneMachine().empty());
  EXPECT_EQ(AutotuneMachine().find_first_of("\t\n"), std::string::npos);
}

}  // namespace
}  // namespace caffe2
