// Store operators (ops spec §3.2-§3.4): create a StoreHandler blob (StoreHandlerPtr)
// and use it from a net.
//
// FileStoreHandlerCreate  [] -> [handler]  path (string, required), prefix (string "")
// RedisStoreHandlerCreate [] -> [handler]  host (string, required), port (int, required, nonzero),
//                                          prefix (string "")
// StoreSet  [handler, data] -> []         blob_name (default: input 1's name); the value is the
// blob
//                                          serialized as one BlobProto
// StoreGet  [handler] -> [data]           blob_name (default: output 0's name); blocks,
// deserializes StoreAdd  [handler] -> [value]          blob_name (required), add_value (int64, 1);
// value is an
//                                          int64 tensor of shape [1] with the new counter value
// StoreWait [handler, names?] -> []       repeated arg blob_name, or input 1 (a string tensor), not
//                                          both; waits for every name
// StoreGet and StoreWait wait 30 s. Extension (not upstream): their int argument timeout_ms
// overrides that (0 waits forever).
#include "core/gradient.h"
#include "core/operator.h"
#include "core/serialization.h"
#include "distributed/op_helpers.h"
#include "distributed/store/file_store_handler.h"
#include "distributed/store/redis_store_handler.h"
#include "distributed/store/store_handler.h"

namespace caffe2 {
namespace {

using HandlerPtr = StoreHandlerPtr;

StoreHandler* HandlerInput(const OperatorBase& op) { return StoreHandlerInput(op, 0).get(); }

std::chrono::milliseconds TimeoutArg(const OperatorBase& op) {
  const int64_t ms = op.GetSingleArgument<int64_t>(
      "timeout_ms", static_cast<int64_t>(StoreHandler::kDefaultTimeout.count()));
  C2_ENFORCE(ms >= 0, "timeout_ms must be >= 0 (0 waits forever), got ", ms);
  return std::chrono::milliseconds(ms);
}

class FileStoreHandlerCreateOp final : public OperatorBase {
 public:
  FileStoreHandlerCreateOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        path_(GetSingleArgument<std::string>("path", "")),
        prefix_(GetSingleArgument<std::string>("prefix", "")) {
    C2_ENFORCE(!path_.empty(), "argument 'path' (an existing store directory) is required");
  }

 protected:
  bool RunOnDevice() override {
    OutputBlob(0)->Reset(new HandlerPtr(std::make_shared<FileStoreHandler>(path_, prefix_)));
    return true;
  }

 private:
  std::string path_, prefix_;
};

class RedisStoreHandlerCreateOp final : public OperatorBase {
 public:
  RedisStoreHandlerCreateOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        host_(GetSingleArgument<std::string>("host", "")),
        port_(GetSingleArgument<int>("port", 0)),
        prefix_(GetSingleArgument<std::string>("prefix", "")),
        timeout_(GetSingleArgument<int64_t>("timeout_ms", 30000)) {
    C2_ENFORCE(!host_.empty(), "argument 'host' (the Redis server) is required");
    C2_ENFORCE(timeout_.count() > 0, "argument 'timeout_ms' must be positive, got ",
               timeout_.count());
    C2_ENFORCE(port_ > 0 && port_ < 65536,
               "argument 'port' is required and must be in [1, 65535], got ", port_);
  }

 protected:
  bool RunOnDevice() override {
    OutputBlob(0)->Reset(new HandlerPtr(CreateRedisStoreHandler(host_, port_, prefix_, timeout_)));
    return true;
  }

 private:
  std::string host_;
  int port_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

class StoreSetOp final : public OperatorBase {
 public:
  StoreSetOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), name_(GetSingleArgument<std::string>("blob_name", def.input(1))) {}

 protected:
  bool RunOnDevice() override {
    HandlerInput(*this)->set(name_, SerializeBlob(InputBlob(1), name_));
    return true;
  }

 private:
  std::string name_;
};

class StoreGetOp final : public OperatorBase {
 public:
  StoreGetOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        name_(GetSingleArgument<std::string>("blob_name", def.output(0))),
        timeout_(TimeoutArg(*this)) {}

 protected:
  bool RunOnDevice() override {
    DeserializeBlob(HandlerInput(*this)->get(name_, timeout_), OutputBlob(0));
    return true;
  }

 private:
  std::string name_;
  std::chrono::milliseconds timeout_;
};

class StoreAddOp final : public OperatorBase {
 public:
  StoreAddOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        name_(GetSingleArgument<std::string>("blob_name", "")),
        add_value_(GetSingleArgument<int64_t>("add_value", 1)) {
    C2_ENFORCE(!name_.empty(), "argument 'blob_name' (the counter's key) is required");
  }

 protected:
  bool RunOnDevice() override {
    const int64_t value = HandlerInput(*this)->add(name_, add_value_);
    Tensor* out = OutputBlob(0)->GetMutableTensor(Device{});
    out->Resize(std::vector<int64_t>{1});
    *out->mutable_data<int64_t>() = value;
    return true;
  }

 private:
  std::string name_;
  int64_t add_value_;
};

class StoreWaitOp final : public OperatorBase {
 public:
  StoreWaitOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        names_(GetRepeatedArgument<std::string>("blob_name")),
        timeout_(TimeoutArg(*this)) {
    C2_ENFORCE(InputSize() == 1 || names_.empty(),
               "give the names to wait for either as the argument 'blob_name' or as input 1, not "
               "both");
  }

 protected:
  bool RunOnDevice() override {
    std::vector<std::string> names = names_;
    if (InputSize() == 2) {
      const Tensor& t = Input(1);
      C2_ENFORCE(t.IsType<std::string>(), "input 1 ('", debug_def().input(1),
                 "') must be a string tensor of key names, got ", t.DebugString());
      const std::string* data = t.data<std::string>();
      names.assign(data, data + t.numel());
    }
    HandlerInput(*this)->wait(names, timeout_);
    return true;
  }

 private:
  std::vector<std::string> names_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

// The handler is a host object whatever the op's device.
REGISTER_CPU_OPERATOR(FileStoreHandlerCreate, FileStoreHandlerCreateOp);
REGISTER_CUDA_OPERATOR(FileStoreHandlerCreate, FileStoreHandlerCreateOp);
REGISTER_CPU_OPERATOR(RedisStoreHandlerCreate, RedisStoreHandlerCreateOp);
REGISTER_CUDA_OPERATOR(RedisStoreHandlerCreate, RedisStoreHandlerCreateOp);
REGISTER_CPU_OPERATOR(StoreSet, StoreSetOp);
REGISTER_CPU_OPERATOR(StoreGet, StoreGetOp);
REGISTER_CPU_OPERATOR(StoreAdd, StoreAddOp);
REGISTER_CPU_OPERATOR(StoreWait, StoreWaitOp);

OPERATOR_SCHEMA(FileStoreHandlerCreate)
    .NumInputs(0)
    .NumOutputs(1)
    .SetDoc(R"DOC(
Creates a StoreHandler that keeps each key in a file under `path` (and, with `prefix`, in a
per-run subdirectory). Values are written to a temporary file and renamed into place.
)DOC")
    .Arg("path", "(string) an existing directory every peer sees", true)
    .Arg("prefix", "(string, default \"\") namespace, usually the run id")
    .Output(0, "handler", "the store handler");

OPERATOR_SCHEMA(RedisStoreHandlerCreate)
    .NumInputs(0)
    .NumOutputs(1)
    .SetDoc(R"DOC(
Creates a StoreHandler on the Redis server `host`:`port`; keys are `prefix` + name. Setting a key
that exists fails (use a fresh run id for every run).
)DOC")
    .Arg("host", "(string) the Redis server's host name", true)
    .Arg("port", "(int) the Redis server's port", true)
    .Arg("prefix", "(string, default \"\") prepended to every key, usually the run id")
    .Arg("timeout_ms", "(int, default 30000) how long a command may wait for the server's answer")
    .Output(0, "handler", "the store handler");

OPERATOR_SCHEMA(StoreSet)
    .NumInputs(2)
    .NumOutputs(0)
    .SetDoc("Stores the serialized blob `data` under `blob_name` in the store.")
    .Arg("blob_name", "(string, default: the name of input 1) the key")
    .Input(0, "handler", "the store handler")
    .Input(1, "data", "the blob to store");

OPERATOR_SCHEMA(StoreGet)
    .NumInputs(1)
    .NumOutputs(1)
    .SetDoc("Waits for `blob_name` in the store and deserializes it into the output blob.")
    .Arg("blob_name", "(string, default: the name of output 0) the key")
    .Arg("timeout_ms", "(int, default 30000; 0 waits forever) extension: how long to wait")
    .Input(0, "handler", "the store handler")
    .Output(0, "data", "the blob read from the store");

OPERATOR_SCHEMA(StoreAdd)
    .NumInputs(1)
    .NumOutputs(1)
    .SetDoc("Atomically adds `add_value` to the counter `blob_name` (missing counts as 0).")
    .Arg("blob_name", "(string) the counter's key", true)
    .Arg("add_value", "(int64, default 1) the increment")
    .Input(0, "handler", "the store handler")
    .Output(0, "value", "int64 tensor of shape [1]: the new counter value");

OPERATOR_SCHEMA(StoreWait)
    .NumInputs(1, 2)
    .NumOutputs(0)
    .SetDoc("Waits until every name exists in the store.")
    .Arg("blob_name", "(repeated string) the names (upstream documents blob_names but reads this)")
    .Arg("timeout_ms", "(int, default 30000; 0 waits forever) extension: how long to wait")
    .Input(0, "handler", "the store handler")
    .Input(1, "names", "(optional) string tensor of names, instead of the argument");

REGISTER_GRADIENT(FileStoreHandlerCreate, NoGradient);
REGISTER_GRADIENT(RedisStoreHandlerCreate, NoGradient);
REGISTER_GRADIENT(StoreSet, NoGradient);
REGISTER_GRADIENT(StoreGet, NoGradient);
REGISTER_GRADIENT(StoreAdd, NoGradient);
REGISTER_GRADIENT(StoreWait, NoGradient);

}  // namespace caffe2
