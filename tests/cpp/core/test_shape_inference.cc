#include <gtest/gtest.h>

#include "core/shape_inference.h"
#include "core/workspace.h"
#include "test_helpers.h"

namespace caffe2 {
using testing::Fill;
using testing::Op;

namespace {
const TensorShape* Find(const TensorShapes& shapes, const std::string& name) {
  for (const auto& s : shapes.shapes()) {
    if (s.name() == name) return &s;
  }
  return nullptr;
}
}  // namespace

TEST(ShapeInference, FromMapFollowsSchemas) {
  NetDef net;
  net.set_name("n");
  *net.add_op() = Op("Copy", {"x"}, {"y"});
  *net.add_op() = Op("Sum", {"x", "y"}, {"z"});
  *net.add_op() =
      Op("ConstantFill", {}, {"c"},
         {MakeArgument("shape", std::vector<int64_t>{3, 4}), MakeArgument<int64_t>("value", 1)});
  *net.add_op() = Op("Copy", {"unknown"}, {"u"});
  auto shapes = InferBlobShapesAndTypesFromMap({{"x", {2, 5}}}, {net});
  ASSERT_NE(Find(shapes, "z"), nullptr);
  EXPECT_EQ(Find(shapes, "z")->dims_size(), 2);
  EXPECT_EQ(Find(shapes, "z")->dims(1), 5);
  ASSERT_NE(Find(shapes, "c"), nullptr);
  EXPECT_EQ(Find(shapes, "c")->data_type(), TensorProto::INT64);
  EXPECT_EQ(Find(shapes, "u"), nullptr);
  EXPECT_THROW(InferBlobShapesAndTypesFromMap({{"x", {0}}}, {net}), EnforceNotMet);
}

TEST(ShapeInference, FromWorkspaceSeedsWithTensorsAndFillsGradients) {
  Workspace ws;
  ws.RunOperatorOnce(Fill("w", {7}, 1.f));
  NetDef net;
  net.set_name("n");
  *net.add_op() = Op("Copy", {"w"}, {"w2"});
  *net.add_op() = Op("Copy", {"dy"}, {"w_grad"});
  auto shapes = InferBlobShapesAndTypesFromWorkspace(&ws, {net});
  ASSERT_NE(Find(shapes, "w2"), nullptr);
  EXPECT_EQ(Find(shapes, "w2")->dims(0), 7);
  ASSERT_NE(Find(shapes, "w_grad"), nullptr);
  EXPECT_EQ(Find(shapes, "w_grad")->dims(0), 7);
}

TEST(ShapeInference, InPlaceOpWithUnknownOutputDropsTheOldShape) {
  NetDef net;
  net.set_name("n");
  *net.add_op() = Op("ConstantFill", {"s"}, {"s"},
                     {MakeArgument<int64_t>("input_as_shape", 1), MakeArgument("value", 1.f)});
  *net.add_op() = Op("Copy", {"s"}, {"t"});
  auto shapes = InferBlobShapesAndTypesFromMap({{"s", {2}}}, {net});
  // Reported as unknown (as upstream does), and not passed on to the ops that read it.
  ASSERT_NE(Find(shapes, "s"), nullptr);
  EXPECT_TRUE(Find(shapes, "s")->unknown_shape());
  EXPECT_EQ(Find(shapes, "s")->dims_size(), 0);
  EXPECT_EQ(Find(shapes, "t"), nullptr);
}

}  // namespace caffe2
