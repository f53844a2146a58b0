#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/net.h"
#include "core/workspace.h"
#include "test_helpers.h"

namespace caffe2 {
using testing::Fill;
using testing::Op;

namespace {

std::mutex g_log_mutex;
std::vector<std::string> g_log;
std::atomic<int> g_running{0};
std::atomic<int> g_max_running{0};

// Sleeps `sleep_ms`, then appends `tag` to g_log; tracks how many run at once.
class TestAppendOp final : public Operator<CPUContext> {
 public:
  TestAppendOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        tag_(GetSingleArgument<std::string>("tag", "")),
        sleep_ms_(GetSingleArgument<int>("sleep_ms", 0)) {}
  bool RunOnDevice() override {
    int now = ++g_running;
    int prev = g_max_running.load();
    while (now > prev && !g_max_running.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    {
      std::lock_guard<std::mutex> lock(g_log_mutex);
      g_log.push_back(tag_);
    }
    --g_running;
    for (int i = 0; i < OutputSize(); ++i) {
      Output(i)->Resize(1);
      Output(i)->mutable_data<float>()[0] = 1.f;
    }
    return !GetSingleArgument<bool>("fail", false);
  }

 private:
  std::string tag_;
  int sleep_ms_;
};

OperatorDef Append(const std::string& tag, std::vector<std::string> in,
                   std::vector<std::string> out, int sleep_ms = 0) {
  return Op("TestAppend", in, out,
            {MakeArgument<std::string>("tag", tag), MakeArgument<int64_t>("sleep_ms", sleep_ms)});
}

void ResetLog() {
  g_log.clear();
  g_max_running = 0;
}

}  // namespace

REGISTER_CPU_OPERATOR(TestAppend, TestAppendOp);

TEST(SimpleNet, RunsInOrderAndStopsOnFalse) {
  ResetLog();
  Workspace ws;
  NetDef def;
  def.set_name("simple");
  *def.add_op() = Append("a", {}, {"x"});
  OperatorDef fail = Append("b", {"x"}, {"y"});
  *fail.add_arg() = MakeArgument<int64_t>("fail", 1);
  *def.add_op() = fail;
  *def.add_op() = Append("c", {"y"}, {"z"});
  ws.CreateNet(def);
  EXPECT_FALSE(ws.RunNet("simple"));
  EXPECT_EQ(g_log, (std::vector<std::string>{"a", "b"}));
}

TEST(NetBase, ExternalInputsMustCoverOpInputs) {
  Workspace ws;
  ws.RunOperatorOnce(Fill("x", {1}, 1.f));
  ws.RunOperatorOnce(Fill("w", {1}, 1.f));
  NetDef def;
  def.set_name("checked");
  def.add_external_input("x");
  *def.add_op() = Op("Sum", {"x", "w"}, {"y"});
  try {
    ws.CreateNet(def);
    FAIL();
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("Source for input w is unknown for net checked"),
              std::string::npos)
        << e.what();
  }
  def.add_external_input("w");
  def.add_external_output("nope");
  EXPECT_THROW(ws.CreateNet(def), EnforceNotMet);
}

TEST(NetBase, OpsInheritTheNetDeviceOption) {
  Workspace ws;
  NetDef def;
  def.set_name("dev");
  def.mutable_device_option()->set_device_type(kCPU);
  def.mutable_device_option()->set_random_seed(77);
  *def.add_op() = Fill("x", {1}, 1.f);
  NetBase* net = ws.CreateNet(def);
  EXPECT_EQ(net->GetOperators()[0]->device_option().random_seed(), 77u);
}

TEST(NetBase, UnknownTypeIsAnError) {
  Workspace ws;
  NetDef def;
  def.set_name("t");
  def.set_type("no_such_net_type");
  EXPECT_THROW(ws.CreateNet(def), EnforceNotMet);
}

TEST(DAGNet, RunsIndependentOpsConcurrentlyAndRespectsDependencies) {
  ResetLog();
  Workspace ws;
  NetDef def;
  def.set_name("dag");
  def.set_type("dag");
  def.set_num_workers(4);
  *def.add_op() = Append("a", {}, {"a"}, 50);
  *def.add_op() = Append("b", {}, {"b"}, 50);
  *def.add_op() = Append("c", {"a", "b"}, {"c"});  // RAW on a and b
  *def.add_op() = Append("d", {"c"}, {"a"});       // WAR on a (read by c) and RAW on c
  ws.CreateNet(def);
  EXPECT_TRUE(ws.RunNet("dag"));
  ASSERT_EQ(g_log.size(), 4u);
  EXPECT_EQ(g_log[2], "c");
  EXPECT_EQ(g_log[3], "d");
  EXPECT_GE(g_max_running.load(), 2);
  // Runs repeatedly.
  ResetLog();
  EXPECT_TRUE(ws.RunNet("dag"));
  EXPECT_EQ(g_log.size(), 4u);
}

TEST(DAGNet, ControlInputOrdersOps) {
  ResetLog();
  Workspace ws;
  NetDef def;
  def.set_name("ctrl");
  def.set_type("async_scheduling");
  def.set_num_workers(4);
  *def.add_op() = Append("first", {}, {"p"}, 50);
  OperatorDef second = Append("second", {}, {"q"});
  second.add_control_input("p");
  *def.add_op() = second;
  ws.CreateNet(def);
  EXPECT_TRUE(ws.RunNet("ctrl"));
  EXPECT_EQ(g_log, (std::vector<std::string>{"first", "second"}));
}

TEST(DAGNet, FirstErrorIsRethrownAndDependentsSkipped) {
  ResetLog();
  Workspace ws;
  NetDef def;
  def.set_name("dagfail");
  def.set_type("dag");
  *def.add_op() = Op("Copy", {"missing_at_run"}, {"y"});
  *def.add_op() = Append("after", {"y"}, {"z"});
  ws.CreateBlob("missing_at_run");  // exists but holds no tensor
  ws.CreateNet(def);
  try {
    ws.RunNet("dagfail");
    FAIL();
  } catch (const EnforceNotMet& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[Copy]", 0), 0u) << e.what();
  }
  EXPECT_TRUE(g_log.empty());
}

TEST(NetBase, BenchmarkReturnsTotalAndPerOpTimes) {
  Workspace ws;
  NetDef def;
  def.set_name("bench");
  *def.add_op() = Fill("x", {10}, 1.f);
  *def.add_op() = Op("Sum", {"x", "x"}, {"y"});
  ws.CreateNet(def);
  auto times = ws.GetNet("bench")->TEST_Benchmark(1, 3, true);
  ASSERT_EQ(times.size(), 3u);
  for (float t : times) EXPECT_GE(t, 0.f);
}

TEST(NetBase, TimelineWritesChromeTrace) {
  std::string path = ::testing::TempDir() + "/c2_timeline_test.json";
  {
    Workspace ws;
    NetDef def;
    def.set_name("traced");
    *def.add_arg() = MakeArgument<std::string>("timeline", path);
    *def.add_op() = Fill("x", {4}, 1.f);
    *def.add_op() = Op("Sum", {"x", "x"}, {"y"});
    ws.CreateNet(def);
    ws.RunNet("traced");
    ws.RunNet("traced");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  size_t count = 0;
  for (size_t pos = json.find("\"ph\": \"X\""); pos != std::string::npos;
       pos = json.find("\"ph\": \"X\"", pos + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 4u);
  EXPECT_NE(json.find("\"name\": \"Sum\""), std::string::npos);
}

}  // namespace caffe2
