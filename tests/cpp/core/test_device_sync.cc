#include <gtest/gtest.h>

#include "core/device_sync.h"
#include "core/enforce.h"
#include "core/flags.h"
#include "core/workspace.h"

C2_DECLARE_bool(caffe2_sync_device_each_op);

namespace caffe2 {
namespace {

int handler_calls = 0;
bool handler_fails = false;
void CountingHandler() {
  ++handler_calls;
  C2_ENFORCE(!handler_fails, "device failed");
}

class DeviceSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handler_calls = 0;
    handler_fails = false;
    SetDeferredDeviceSyncHandler(&CountingHandler);
  }
  void TearDown() override {
    SetDeferredDeviceSyncHandler(nullptr);
    FLAGS_caffe2_sync_device_each_op = false;
  }
};

TEST_F(DeviceSyncTest, ScopeDefersUntilFinishAndNestedScopesDoNotFinish) {
  EXPECT_FALSE(DeferDeviceSync::Active());
  {
    DeferDeviceSync outer;
    EXPECT_TRUE(DeferDeviceSync::Active());
    {
      DeferDeviceSync inner;
      inner.Finish();  // not the owner: nothing happens
      EXPECT_TRUE(DeferDeviceSync::Active());
    }
    EXPECT_EQ(handler_calls, 0);
    outer.Finish();
    EXPECT_FALSE(DeferDeviceSync::Active());
    EXPECT_EQ(handler_calls, 1);
  }
  EXPECT_EQ(handler_calls, 1);  // the destructor does not finish twice
}

TEST_F(DeviceSyncTest, DestructorFinishesAndSwallowsTheError) {
  handler_fails = true;
  EXPECT_NO_THROW({ DeferDeviceSync scope; });
  EXPECT_EQ(handler_calls, 1);
  EXPECT_FALSE(DeferDeviceSync::Active());
}

TEST_F(DeviceSyncTest, FinishThrowsTheDeviceError) {
  handler_fails = true;
  DeferDeviceSync scope;
  EXPECT_THROW(scope.Finish(), EnforceNotMet);
  EXPECT_FALSE(DeferDeviceSync::Active());
}

TEST_F(DeviceSyncTest, FlagTurnsDeferralOff) {
  FLAGS_caffe2_sync_device_each_op = true;
  DeferDeviceSync scope;
  EXPECT_FALSE(DeferDeviceSync::Active());
  scope.Finish();
  EXPECT_EQ(handler_calls, 0);
}

TEST_F(DeviceSyncTest, SimpleNetFinishesOncePerRunAndDagNetDoesNotDefer) {
  Workspace ws;
  for (const char* type : {"simple", "dag"}) {
    NetDef def;
    def.set_name(std::string("n_") + type);
    def.set_type(type);
    for (int i = 0; i < 3; ++i) {
      OperatorDef* op = def.add_op();
      op->set_type("ConstantFill");
      op->add_output("x" + std::to_string(i));
      Argument* shape = op->add_arg();
      shape->set_name("shape");
      shape->add_ints(2);
    }
    handler_calls = 0;
    ASSERT_TRUE(ws.RunNetOnce(def));
    EXPECT_EQ(handler_calls, std::string(type) == "simple" ? 1 : 0) << type;
  }
}

}  // namespace
}  // namespace caffe2
