#include "core/shape_inference.h"

#include "core/blob.h"
#include "core/enforce.h"
#include "core/logging.h"
#include "core/op_schema.h"
#include "core/workspace.h"

namespace caffe2 {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TensorShapes Infer(std::map<std::string, TensorShape> shapes, const std::vector<NetDef>& nets) {
  for (const NetDef& net : nets) {
    for (const OperatorDef& op : net.op()) {
      if (op.type().find("queue") != std::string::npos ||
          op.type().find("Queue") != std::string::npos) {
        continue;
      }
      std::vector<TensorShape> inputs;
      bool known = true;
      for (const auto& in : op.input()) {
        auto it = shapes.find(in);
        if (it == shapes.end() || it->second.unknown_shape()) {
          known = false;
          break;
        }
        inputs.push_back(it->second);
      }
      const OpSchema* schema = OpSchemaRegistry::Schema(op.type());
      if (op.type() == "Sum" && !inputs.empty() && known) {
        // Accumulation inputs (autosplit gradients) share the sum's shape.
        for (const auto& out : op.output()) shapes[out] = inputs[0];
        continue;
      }
      if (!known || !schema || !schema->HasTensorInference()) continue;
      std::vector<TensorShape> outputs;
      try {
        outputs = schema->InferTensor(op, inputs);
      } catch (const EnforceNotMet& e) {
        const std::string msg = e.what();
        const std::string prefix = "[" + op.type() + "]";
        C2_THROW(msg.rfind(prefix, 0) == 0 ? "" : prefix + " ", msg, " (shape inference of net '",
                 net.name(), "')");
      }
      // An unknown output is kept (with its type, as upstream reports it) and replaces what an
      // in-place op's input had; later ops treat it as not known.
      for (int i = 0; i < op.output_size() && i < static_cast<int>(outputs.size()); ++i) {
        shapes[op.output(i)] = outputs[i];
      }
    }
  }
  // Gradients without a shape take their parameter's.
  for (const NetDef& net : nets) {
    for (const OperatorDef& op : net.op()) {
      for (const auto& out : op.output()) {
        auto known = shapes.find(out);
        if ((known != shapes.end() && !known->second.unknown_shape()) || !EndsWith(out, "_grad")) {
          continue;
        }
        auto param = shapes.find(out.substr(0, out.size() - 5));
        if (param != shapes.end() && !param->second.unknown_shape()) shapes[out] = param->second;
      }
    }
  }
  TensorShapes result;
  for (auto& kv : shapes) {
    TensorShape* s = result.add_shapes();
    *s = kv.second;
    s->set_name(kv.first);
  }
  return result;
}

}  // namespace

TensorShape GetTensorShapeOfBlob(const Blob& blob) {
  TensorShape shape;
  if (!blob.IsType<Tensor>()) {
    shape.set_unknown_shape(true);
    return shape;
  }
  const Tensor& t = blob.Get<Tensor>();
  if (!t.initialized()) {
    shape.set_unknown_shape(true);
    return shape;
  }
  for (int64_t d : t.dims()) shape.add_dims(d);
  shape.set_data_type(t.meta().initialized() ? static_cast<TensorProto::DataType>(t.dtype())
                                             : TensorProto::UNDEFINED);
  return shape;
}

TensorShapes InferBlobShapesAndTypesFromWorkspace(Workspace* ws, const std::vector<NetDef>& nets) {
  std::map<std::string, TensorShape> shapes;
  for (const auto& name : ws->Blobs()) {
    const Blob* blob = ws->GetBlob(name);
    if (!blob) continue;
    TensorShape s = GetTensorShapeOfBlob(*blob);
    if (!s.unknown_shape()) shapes[name] = s;
  }
  try {
    return Infer(std::move(shapes), nets);
  } catch (const std::exception& e) {
    C2_LOG(Warning) << "Shape inference failed: " << e.what();
    return TensorShapes();
  }
}

TensorShapes InferBlobShapesAndTypesFromMap(const std::map<std::string, std::vector<int64_t>>& dims,
                                            const std::vector<NetDef>& nets) {
  std::map<std::string, TensorShape> shapes;
  for (const auto& kv : dims) {
    TensorShape s;
    for (int64_t d : kv.second) {
      C2_ENFORCE(d > 0, "Shape inference: blob ", kv.first, " has non-positive dim ", d);
      s.add_dims(d);
    }
    s.set_data_type(TensorProto::FLOAT);
    shapes[kv.first] = s;
  }
  try {
    return Infer(std::move(shapes), nets);
  } catch (const std::exception& e) {
    C2_LOG(Warning) << "Shape inference failed: " << e.what();
    return TensorShapes();
  }
}

}  // namespace caffe2
