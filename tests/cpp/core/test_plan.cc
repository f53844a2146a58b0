#include <gtest/gtest.h>

#include "core/net.h"
#include "core/workspace.h"
#include "test_helpers.h"

namespace caffe2 {
using testing::Fill;
using testing::Op;

namespace {

int64_t Counter(Workspace& ws, const std::string& name) {
  return ws.GetBlob(name)->Get<Tensor>().data<int64_t>()[0];
}

NetDef IterNet(const std::string& name, const std::string& counter) {
  NetDef net;
  net.set_name(name);
  *net.add_op() = Op("Iter", {counter}, {counter});
  return net;
}

OperatorDef Int64Fill(const std::string& out, int64_t value) {
  return Op(
      "ConstantFill", {}, {out},
      {MakeArgument("shape", std::vector<int64_t>{1}), MakeArgument<int64_t>("value", value)});
}

}  // namespace

TEST(Plan, NumIterAndSubsteps) {
  Workspace ws;
  ws.RunOperatorOnce(Int64Fill("it", 0));
  PlanDef plan;
  plan.set_name("p");
  *plan.add_network() = IterNet("inc", "it");
  ExecutionStep* outer = plan.add_execution_step();
  outer->set_name("outer");
  outer->set_num_iter(3);
  ExecutionStep* inner = outer->add_substep();
  inner->set_name("inner");
  inner->add_network("inc");
  inner->set_num_iter(2);
  EXPECT_TRUE(ws.RunPlan(plan));
  EXPECT_EQ(Counter(ws, "it"), 6);
}

TEST(Plan, ShouldStopBlobEndsTheLoop) {
  Workspace ws;
  ws.RunOperatorOnce(Int64Fill("it", 0));
  // stop = (it >= 5), computed by a net: Iter then a bool fill once the counter reaches 5 is not
  // expressible with core ops, so a net sets the stop blob directly after 1 iteration.
  Tensor* stop = ws.CreateBlob("stop")->GetMutableTensor(Device{});
  stop->Resize(std::vector<int64_t>{});
  stop->mutable_data<bool>()[0] = false;
  PlanDef plan;
  *plan.add_network() = IterNet("inc", "it");
  NetDef set_stop;
  set_stop.set_name("set_stop");
  *set_stop.add_op() =
      Op("ConstantFill", {}, {"stop"},
         {MakeArgument("shape", std::vector<int64_t>{}), MakeArgument<int64_t>("value", 1),
          MakeArgument<int64_t>("dtype", static_cast<int64_t>(DataType::BOOL))});
  *plan.add_network() = set_stop;
  ExecutionStep* step = plan.add_execution_step();
  step->set_name("loop");
  step->set_should_stop_blob("stop");
  ExecutionStep* a = step->add_substep();
  a->set_name("a");
  a->add_network("inc");
  a->set_num_iter(4);
  ExecutionStep* b = step->add_substep();
  b->set_name("b");
  b->add_network("set_stop");
  EXPECT_TRUE(ws.RunPlan(plan));
  EXPECT_EQ(Counter(ws, "it"), 4);
}

TEST(Plan, InvalidStepsAreRejected) {
  Workspace ws;
  PlanDef plan;
  *plan.add_network() = IterNet("inc", "it");
  ExecutionStep* step = plan.add_execution_step();
  step->set_name("both");
  step->set_should_stop_blob("stop");
  step->set_num_iter(2);
  step->add_network("inc");
  EXPECT_THROW(ws.RunPlan(plan), EnforceNotMet);
  step->clear_should_stop_blob();
  step->set_only_once(true);
  EXPECT_THROW(ws.RunPlan(plan), EnforceNotMet);
  PlanDef dup;
  *dup.add_network() = IterNet("inc", "it");
  *dup.add_network() = IterNet("inc", "it");
  EXPECT_THROW(ws.RunPlan(dup), EnforceNotMet);
  PlanDef unknown;
  ExecutionStep* u = unknown.add_execution_step();
  u->add_network("nope");
  EXPECT_THROW(ws.RunPlan(unknown), EnforceNotMet);
}

TEST(Plan, ConcurrentSubstepsAndInstances) {
  Workspace ws;
  ws.RunOperatorOnce(Int64Fill("c1", 0));
  ws.RunOperatorOnce(Int64Fill("c2", 0));
  ws.RunOperatorOnce(Op("CreateMutex", {}, {"mu"}));
  PlanDef plan;
  NetDef atomic;
  atomic.set_name("atomic");
  *atomic.add_op() = Op("AtomicIter", {"mu", "c1"}, {"c1"});
  *plan.add_network() = atomic;
  *plan.add_network() = IterNet("inc2", "c2");
  ExecutionStep* step = plan.add_execution_step();
  step->set_name("par");
  step->set_concurrent_substeps(true);
  step->set_num_iter(5);
  ExecutionStep* s1 = step->add_substep();
  s1->set_name("s1");
  s1->add_network("atomic");
  s1->set_num_iter(10);
  ExecutionStep* s2 = step->add_substep();
  s2->set_name("s2");
  s2->add_network("inc2");
  EXPECT_TRUE(ws.RunPlan(plan));
  EXPECT_EQ(Counter(ws, "c1"), 50);
  EXPECT_EQ(Counter(ws, "c2"), 5);

  PlanDef instances;
  *instances.add_network() = atomic;
  ExecutionStep* multi = instances.add_execution_step();
  multi->set_name("multi");
  multi->set_num_concurrent_instances(4);
  ExecutionStep* body = multi->add_substep();
  body->set_name("body");
  body->add_network("atomic");
  body->set_num_iter(25);
  EXPECT_TRUE(ws.RunPlan(instances));
  EXPECT_EQ(Counter(ws, "c1"), 150);
}

TEST(Plan, RunEveryMsSubstepRunsPeriodicallyAndAtTheEnd) {
  Workspace ws;
  ws.RunOperatorOnce(Int64Fill("work", 0));
  ws.RunOperatorOnce(Int64Fill("reports", 0));
  PlanDef plan;
  *plan.add_network() = IterNet("work_net", "work");
  *plan.add_network() = IterNet("report_net", "reports");
  ExecutionStep* step = plan.add_execution_step();
  step->set_name("main");
  ExecutionStep* worker = step->add_substep();
  worker->set_name("worker");
  worker->add_network("work_net");
  worker->set_num_iter(1);
  ExecutionStep* reporter = step->add_substep();
  reporter->set_name("reporter");
  reporter->add_network("report_net");
  reporter->set_run_every_ms(10);
  EXPECT_TRUE(ws.RunPlan(plan));
  EXPECT_EQ(Counter(ws, "work"), 1);
  EXPECT_GE(Counter(ws, "reports"), 1);  // at least the final run
}

TEST(Plan, CreateWorkspaceKeepsLocalBlobsOut) {
  Workspace ws;
  PlanDef plan;
  NetDef net;
  net.set_name("fill");
  *net.add_op() = Fill("scratch", {2}, 3.f);
  *plan.add_network() = net;
  ExecutionStep* step = plan.add_execution_step();
  step->set_name("isolated");
  step->set_create_workspace(true);
  step->add_network("fill");
  EXPECT_TRUE(ws.RunPlan(plan));
  EXPECT_FALSE(ws.HasBlob("scratch"));
}

TEST(Plan, ExistingNetsAreOverwrittenFromThePlan) {
  Workspace ws;
  ws.RunOperatorOnce(Int64Fill("it", 0));
  NetDef old_net;
  old_net.set_name("inc");
  ws.CreateNet(old_net);  // does nothing
  PlanDef plan;
  *plan.add_network() = IterNet("inc", "it");
  ExecutionStep* step = plan.add_execution_step();
  step->set_name("s");
  step->add_network("inc");
  EXPECT_TRUE(ws.RunPlan(plan));
  EXPECT_EQ(Counter(ws, "it"), 1);
}

}  // namespace caffe2
