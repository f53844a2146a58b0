#include <gtest/gtest.h>

#include <algorithm>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/op_alias.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "test_helpers.h"

namespace caffe2 {
using testing::Fill;
using testing::Op;

namespace {

// Writes a marker naming the implementation that ran.
template <int kMarker>
class MarkerOp final : public Operator<CPUContext> {
 public:
  MarkerOp(const OperatorDef& def, Workspace* ws) : Operator<CPUContext>(def, ws) {
    if (kMarker == 3) throw UnsupportedOperatorFeature("engine SLOW declines this def");
  }
  bool RunOnDevice() override {
    Tensor* out = Output(0);
    out->Resize(1);
    out->mutable_data<int32_t>()[0] = kMarker;
    return true;
  }
};

class FailingOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override { C2_THROW("value ", 42, " is bad"); }
};

}  // namespace

REGISTER_CPU_OPERATOR(TestMarker, MarkerOp<1>);
REGISTER_CPU_OPERATOR(TestMarker_ENGINE_FAST, MarkerOp<2>);
REGISTER_CPU_OPERATOR(TestMarker_ENGINE_SLOW, MarkerOp<3>);
OPERATOR_SCHEMA(TestMarker).NumInputs(0, 1).NumOutputs(1).AllowInplace({{0, 0}});
REGISTER_CPU_OPERATOR(TestFailing, FailingOp);
OPERATOR_SCHEMA(TestFailing).NumInputs(0).NumOutputs(0, 1);
REGISTER_OPERATOR_ALIAS(TestMarker2D, TestMarker);

int RunMarker(const std::string& engine) {
  Workspace ws;
  OperatorDef def = Op("TestMarker", {}, {"y"});
  if (!engine.empty()) def.set_engine(engine);
  ws.RunOperatorOnce(def);
  return ws.GetBlob("y")->Get<Tensor>().data<int32_t>()[0];
}

TEST(OperatorRegistry, EngineSelectionAndFallback) {
  EXPECT_EQ(RunMarker(""), 1);
  EXPECT_EQ(RunMarker("FAST"), 2);
  EXPECT_EQ(RunMarker("CUDNN"), 1);       // unknown engine: default kernel
  EXPECT_EQ(RunMarker("CUDNN,FAST"), 2);  // comma list tried in order
  EXPECT_EQ(RunMarker("SLOW"), 1);        // engine declined in its constructor
  EXPECT_EQ(RunMarker("DEFAULT"), 1);
}

TEST(OperatorRegistry, AnAliasStandsForItsTargetEverywhere) {
  Workspace ws;
  OperatorDef def = Op("TestMarker2D", {}, {"y"});
  ws.RunOperatorOnce(def);  // the default kernel
  EXPECT_EQ(ws.GetBlob("y")->Get<Tensor>().data<int32_t>()[0], 1);
  def.set_engine("FAST");  // an engine of the target
  ws.RunOperatorOnce(def);
  EXPECT_EQ(ws.GetBlob("y")->Get<Tensor>().data<int32_t>()[0], 2);
  EXPECT_EQ(OpSchemaRegistry::Schema("TestMarker2D"), OpSchemaRegistry::Schema("TestMarker"));
  EXPECT_EQ(OperatorAliasTarget("TestMarker2D_ENGINE_FAST"), "TestMarker_ENGINE_FAST");
  EXPECT_EQ(OperatorAliasTarget("TestMarker2DGradient"), "TestMarkerGradient");
  EXPECT_EQ(OperatorAliasTarget("TestMarker"), "");
  // Errors name the alias the def uses.
  OperatorDef bad = Op("TestMarker2D", {"a", "b"}, {"y"});
  std::string error;
  try {
    ws.RunOperatorOnce(bad);
  } catch (const EnforceNotMet& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("[TestMarker2D] 2 inputs given"), std::string::npos) << error;
  // Listings show the alias beside each key it covers, and no key it does not.
  const auto keys = OperatorRegistry::Keys(kCPU);
  for (const char* key : {"TestMarker2D", "TestMarker2D_ENGINE_FAST", "TestMarker2D_ENGINE_SLOW"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  EXPECT_EQ(std::count_if(keys.begin(), keys.end(),
                          [](const std::string& k) { return k.rfind("TestMarker2D", 0) == 0; }),
            3);
  const auto schemas = OpSchemaRegistry::Keys();
  EXPECT_NE(std::find(schemas.begin(), schemas.end(), "TestMarker2D"), schemas.end());
  // The real ones: Conv2D and its gradient, on the CPU, with the DNNL engine when built.
  EXPECT_NE(OperatorRegistry::Find(kCPU, "Conv2DGradient"), nullptr);
  EXPECT_TRUE(GradientRegistry::Has("Conv3D"));
  EXPECT_NE(OpSchemaRegistry::Schema("MaxPool1DGradient"), nullptr);
  EXPECT_THROW(RegisterOperatorAlias("TestMarker2D", "TestFailing"), EnforceNotMet);
}

TEST(OperatorRegistry, PerOpPreferenceIsTried) {
  SetPerOpEnginePref({{kCPU, {{"TestMarker", {"FAST"}}}}});
  EXPECT_EQ(RunMarker(""), 2);
  SetPerOpEnginePref({});
  EXPECT_EQ(RunMarker(""), 1);
  EXPECT_THROW(SetPerOpEnginePref({{kCPU, {{"NoSuchOpAnywhere", {"FAST"}}}}}), EnforceNotMet);
}

TEST(OperatorRegistry, KeysAndNearbyNames) {
  EXPECT_EQ(OpRegistryKey("Conv", ""), "Conv");
  EXPECT_EQ(OpRegistryKey("Conv", "DEFAULT"), "Conv");
  EXPECT_EQ(OpRegistryKey("Conv", "CUDNN"), "Conv_ENGINE_CUDNN");
  auto keys = OperatorRegistry::AllKeys();
  EXPECT_NE(std::find(keys.begin(), keys.end(), "TestMarker_ENGINE_FAST"), keys.end());
  auto near = OperatorRegistry::NearbyNames("TestMarkr");
  EXPECT_NE(std::find(near.begin(), near.end(), "TestMarker"), near.end());
}

TEST(Operator, UnknownTypeSuggestsNames) {
  Workspace ws;
  try {
    ws.RunOperatorOnce(Op("ConstantFil", {}, {"y"}));
    FAIL();
  } catch (const EnforceNotMet& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("Cannot create operator of type 'ConstantFil' on the device 'CPU'"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("ConstantFill"), std::string::npos) << msg;
  }
}

TEST(Operator, SchemaRejectsBadCountsAndInPlace) {
  Workspace ws;
  ws.RunOperatorOnce(Fill("x", {2}, 1.f));
  EXPECT_THROW(ws.RunOperatorOnce(Op("TestMarker", {"x", "x"}, {"y"})), EnforceNotMet);
  EXPECT_THROW(ws.RunOperatorOnce(Op("Copy", {"x"}, {"x"})), EnforceNotMet);  // no in-place
  try {
    ws.RunOperatorOnce(Op("Iter", {"x"}, {"other"}));  // enforced in-place
    FAIL();
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("must be the same blob"), std::string::npos) << e.what();
  }
}

TEST(Operator, ErrorsStartWithTypeAndNameTheOp) {
  Workspace ws;
  try {
    ws.RunOperatorOnce(Op("TestFailing", {}, {"out"}));
    FAIL();
  } catch (const EnforceNotMet& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[TestFailing] value 42 is bad", 0), 0u) << msg;
    EXPECT_NE(msg.find("in operator TestFailing() -> (out)"), std::string::npos) << msg;
  }
}

TEST(Operator, NetPositionOfFailureIsRecorded) {
  Workspace ws;
  NetDef def;
  def.set_name("failing");
  *def.add_op() = Fill("x", {1}, 1.f);
  *def.add_op() = Op("TestFailing", {}, {});
  ws.CreateNet(def);
  EXPECT_THROW(ws.RunNet("failing"), EnforceNotMet);
  EXPECT_EQ(ws.last_failed_op_net_position.load(), 1);
}

TEST(Operator, InputThatIsNotATensorIsNamed) {
  Workspace ws;
  *ws.CreateBlob("s")->GetMutable<std::string>() = "text";
  try {
    ws.RunOperatorOnce(Op("Copy", {"s"}, {"y"}));
    FAIL();
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("Input 0 ('s') is not a tensor"), std::string::npos)
        << e.what();
  }
}

TEST(GpuFallbackDeclarations, OpsDeclareTheirFallbackBesideTheirCpuKernel) {
  const std::vector<std::string> declared = DeclaredGpuFallbacks();
  for (const char* type : {"Print", "LearningRate", "Shape", "Size", "TopK", "TopKGradient",
                           "OneHot", "SparseToDense", "LpPool", "ConvTranspose"}) {
    EXPECT_TRUE(std::find(declared.begin(), declared.end(), type) != declared.end()) << type;
    EXPECT_NE(OperatorRegistry::Find(kCPU, type), nullptr) << type << " has no CPU kernel to run";
  }
  EXPECT_TRUE(std::is_sorted(declared.begin(), declared.end()));
  EXPECT_THROW(DeclareGpuFallback("Print"), EnforceNotMet);
}

}  // namespace caffe2
