#include <gtest/gtest.h>

#include "core/net.h"
#include "core/workspace.h"
#include "test_helpers.h"

namespace caffe2 {
using testing::Fill;
using testing::Op;

TEST(Workspace, BlobsAreSortedAndLookupsFallThroughToParent) {
  Workspace parent;
  parent.CreateBlob("b");
  parent.CreateBlob("a");
  EXPECT_EQ(parent.Blobs(), (std::vector<std::string>{"a", "b"}));
  Workspace child(&parent);
  EXPECT_TRUE(child.HasBlob("a"));
  // CreateBlob returns the parent's blob, so writes land there.
  EXPECT_EQ(child.CreateBlob("a"), parent.GetBlob("a"));
  child.CreateBlob("c");
  EXPECT_FALSE(parent.HasBlob("c"));
  EXPECT_EQ(child.Blobs(), (std::vector<std::string>{"c", "a", "b"}));
  EXPECT_EQ(child.LocalBlobs(), (std::vector<std::string>{"c"}));
  EXPECT_EQ(child.GetBlob("missing"), nullptr);
}

TEST(Workspace, ForwardedBlobsMapToParentNames) {
  Workspace parent;
  *parent.CreateBlob("p")->GetMutable<int>() = 4;
  Workspace child(&parent, {{"local", "p"}});
  EXPECT_EQ(child.GetBlob("local")->Get<int>(), 4);
  EXPECT_THROW(Workspace(&parent, {{"x", "nope"}}), EnforceNotMet);
}

TEST(Workspace, RemoveAndRename) {
  Workspace ws;
  ws.CreateBlob("x");
  EXPECT_TRUE(ws.RenameBlob("x", "y"));
  EXPECT_FALSE(ws.HasBlob("x"));
  EXPECT_TRUE(ws.RemoveBlob("y"));
  EXPECT_FALSE(ws.RemoveBlob("y"));
  EXPECT_THROW(ws.RenameBlob("nope", "z"), EnforceNotMet);
}

TEST(Workspace, CreateNetRefusesOverwriteUnlessAsked) {
  Workspace ws;
  NetDef def;
  def.set_name("n");
  *def.add_op() = Fill("x", {2}, 1.f);
  ws.CreateNet(def);
  try {
    ws.CreateNet(def);
    FAIL();
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("I respectfully refuse to overwrite"), std::string::npos);
  }
  EXPECT_NE(ws.CreateNet(def, true), nullptr);
  EXPECT_EQ(ws.Nets(), std::vector<std::string>{"n"});
  EXPECT_TRUE(ws.RunNet("n"));
  EXPECT_THROW(ws.RunNet("other"), EnforceNotMet);
  ws.DeleteNet("n");
  EXPECT_TRUE(ws.Nets().empty());
}

TEST(Workspace, NetWithoutNameIsRejected) {
  Workspace ws;
  NetDef def;
  EXPECT_THROW(ws.CreateNet(def), EnforceNotMet);
}

TEST(Workspace, RootFolderDefaultsToDot) {
  EXPECT_EQ(Workspace().RootFolder(), ".");
  EXPECT_EQ(Workspace("/tmp/r").RootFolder(), "/tmp/r");
  Workspace parent("/tmp/r");
  EXPECT_EQ(Workspace(&parent).RootFolder(), "/tmp/r");
}

TEST(Workspace, RunOperatorOnceReportsMissingInputByName) {
  Workspace ws;
  try {
    ws.RunOperatorOnce(Op("Copy", {"ghost"}, {"y"}));
    FAIL();
  } catch (const EnforceNotMet& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[Copy]", 0), 0u) << msg;
    EXPECT_NE(msg.find("non-existing input blob: ghost"), std::string::npos) << msg;
  }
}

}  // namespace caffe2
