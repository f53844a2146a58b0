// FlattenDenseTensors / UnflattenDenseTensors and Free: the storage of the buffer and of the
// refilled tensors must stay the same from run to run (Gloo ops enforce equal data pointers).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/argument.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace caffe2 {
namespace {

void Feed(Workspace* ws, const std::string& name, std::vector<int64_t> dims, float start) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device{kCPU, 0});
  t->Resize(dims);
  float* p = t->mutable_data<float>();
  for (int64_t i = 0; i < t->numel(); ++i) p[i] = start + static_cast<float>(i);
}

const Tensor& Get(Workspace* ws, const std::string& name) {
  return ws->GetBlob(name)->Get<Tensor>();
}

TEST(FlattenDenseTensors, PacksInOrderAndKeepsTheBufferPointer) {
  Workspace ws;
  Feed(&ws, "a", {2, 3}, 0.f);
  Feed(&ws, "b", {4}, 100.f);
  auto flatten =
      CreateOperator(CreateOperatorDef("FlattenDenseTensors", "", {"a", "b"}, {"buf"}), &ws);
  ASSERT_TRUE(flatten->Run());
  const Tensor& buf = Get(&ws, "buf");
  ASSERT_EQ(buf.dims(), std::vector<int64_t>({10}));
  const void* first = buf.raw_data();
  const float expected[] = {0, 1, 2, 3, 4, 5, 100, 101, 102, 103};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(buf.data<float>()[i], expected[i]);

  Feed(&ws, "a", {2, 3}, 10.f);
  ASSERT_TRUE(flatten->Run());
  EXPECT_EQ(Get(&ws, "buf").raw_data(), first);
  EXPECT_EQ(Get(&ws, "buf").data<float>()[0], 10.f);
}

TEST(UnflattenDenseTensors, RefillsInPlaceWithoutReallocating) {
  Workspace ws;
  Feed(&ws, "a", {2, 3}, 0.f);
  Feed(&ws, "b", {4}, 0.f);
  Feed(&ws, "buf", {10}, 50.f);
  const void* a_data = Get(&ws, "a").raw_data();
  const void* b_data = Get(&ws, "b").raw_data();
  auto unflatten = CreateOperator(
      CreateOperatorDef("UnflattenDenseTensors", "", {"buf", "a", "b"}, {"a", "b"}), &ws);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(unflatten->Run());
    EXPECT_EQ(Get(&ws, "a").raw_data(), a_data);
    EXPECT_EQ(Get(&ws, "b").raw_data(), b_data);
  }
  EXPECT_EQ(Get(&ws, "a").dims(), std::vector<int64_t>({2, 3}));
  EXPECT_EQ(Get(&ws, "a").data<float>()[5], 55.f);
  EXPECT_EQ(Get(&ws, "b").data<float>()[0], 56.f);
  EXPECT_EQ(Get(&ws, "b").data<float>()[3], 59.f);
}

TEST(UnflattenDenseTensors, RejectsASizeMismatch) {
  Workspace ws;
  Feed(&ws, "a", {2, 3}, 0.f);
  Feed(&ws, "buf", {5}, 0.f);
  try {
    ws.RunOperatorOnce(CreateOperatorDef("UnflattenDenseTensors", "", {"buf", "a"}, {"a"}));
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("[UnflattenDenseTensors] buffer has 5 elements but the 1 "
                                         "tensors hold 6"),
              std::string::npos)
        << e.what();
  }
}

TEST(Free, EmptiesTheBlobs) {
  Workspace ws;
  Feed(&ws, "a", {3}, 1.f);
  ws.RunOperatorOnce(CreateOperatorDef("Free", "", {"a"}, {"a"}));
  ASSERT_NE(ws.GetBlob("a"), nullptr);
  EXPECT_FALSE(ws.GetBlob("a")->IsType<Tensor>());
}

}  // namespace
}  // namespace caffe2
