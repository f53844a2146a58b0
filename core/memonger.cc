#include "core/memonger.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "core/enforce.h"

namespace caffe2 {
namespace memonger {
namespace {

struct Lifetime {
  int first = -1;  // op index of the first touch
  int last = -1;   // op index of the last touch (read or write)
  bool first_is_write = false;
  std::string device;  // device of the first writer (type and gpu id)
};

std::string DeviceKey(const NetDef& net, const OperatorDef& op) {
  const DeviceOption& d = op.has_device_option() ? op.device_option() : net.device_option();
  return std::to_string(d.device_type()) + ":" + std::to_string(d.cuda_gpu_id());
}

std::unordered_map<std::string, Lifetime> ComputeLifetimes(const NetDef& net) {
  std::unordered_map<std::string, Lifetime> life;
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    std::unordered_set<std::string> outputs(op.output().begin(), op.output().end());
    auto touch = [&](const std::string& blob) {
      Lifetime& l = life[blob];
      if (l.first < 0) {
        l.first = i;
        // An op that reads a blob it also writes (in place) still reads it first.
        l.first_is_write =
            outputs.count(blob) > 0 &&
            std::find(op.input().begin(), op.input().end(), blob) == op.input().end();
        l.device = DeviceKey(net, op);
      }
      l.last = i;
    };
    for (const auto& b : op.input()) touch(b);
    for (const auto& b : op.output()) touch(b);
  }
  return life;
}

// Blobs an op with sub-nets (If, While, RecurrentNetwork...) touches, in its own lists or inside
// the sub-nets: renaming them would have to reach into the sub-nets, so they are never shared.
void CollectNetBlobs(const NetDef& net, std::unordered_set<std::string>* out) {
  out->insert(net.external_input().begin(), net.external_input().end());
  out->insert(net.external_output().begin(), net.external_output().end());
  for (const auto& op : net.op()) {
    out->insert(op.input().begin(), op.input().end());
    out->insert(op.output().begin(), op.output().end());
    for (const auto& arg : op.arg()) {
      if (arg.has_n()) CollectNetBlobs(arg.n(), out);
      for (const auto& n : arg.nets()) CollectNetBlobs(n, out);
    }
  }
}

std::unordered_set<std::string> PinnedBlobs(const NetDef& net) {
  std::unordered_set<std::string> pinned;
  for (const auto& op : net.op()) {
    bool has_subnet = false;
    for (const auto& arg : op.arg()) {
      if (arg.has_n()) {
        has_subnet = true;
        CollectNetBlobs(arg.n(), &pinned);
      }
      for (const auto& n : arg.nets()) {
        has_subnet = true;
        CollectNetBlobs(n, &pinned);
      }
    }
    if (has_subnet) {
      pinned.insert(op.input().begin(), op.input().end());
      pinned.insert(op.output().begin(), op.output().end());
    }
  }
  return pinned;
}

int64_t NumElements(const std::map<std::string, std::vector<int64_t>>& shapes,
                    const std::string& b) {
  auto it = shapes.find(b);
  if (it == shapes.end()) return -1;
  int64_t n = 1;
  for (int64_t d : it->second) n *= d;
  return n;
}

// Assigns a slot to every candidate blob in one sweep over the ops, then renames the blobs of
// slots holding two or more of them.
NetDef Recycle(const NetDef& net, const std::function<bool(const std::string&)>& is_candidate,
               const std::string& prefix,
               const std::map<std::string, std::vector<int64_t>>& shapes) {
  const auto life = ComputeLifetimes(net);
  std::unordered_set<std::string> external(net.external_input().begin(),
                                           net.external_input().end());
  external.insert(net.external_output().begin(), net.external_output().end());
  const auto pinned = PinnedBlobs(net);

  struct Slot {
    std::string device;
    int64_t size = -1;  // largest known element count of its blobs, -1 unknown
    std::vector<std::string> blobs;
  };
  std::vector<Slot> slots;
  std::unordered_map<std::string, int> slot_of;
  std::vector<int> free_slots;  // in the order they were freed
  // Blobs whose last touch is op i, released after op i.
  std::vector<std::vector<std::string>> release(net.op_size());

  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    for (const auto& b : op.output()) {
      if (slot_of.count(b)) continue;
      const Lifetime& l = life.at(b);
      if (l.first != i || !l.first_is_write || external.count(b) || pinned.count(b) ||
          !is_candidate(b)) {
        continue;
      }
      const int64_t size = NumElements(shapes, b);
      int best = -1;
      for (int k = static_cast<int>(free_slots.size()) - 1; k >= 0; --k) {
        const Slot& s = slots[free_slots[k]];
        if (s.device != l.device) continue;
        if (best < 0) {
          best = k;  // the most recently freed one, unless sizes say better
          if (size < 0) break;
          continue;
        }
        const Slot& cur = slots[free_slots[best]];
        const bool fits = s.size >= size, cur_fits = cur.size >= size;
        if ((fits && (!cur_fits || s.size < cur.size)) ||
            (!fits && !cur_fits && s.size > cur.size)) {
          best = k;
        }
      }
      int slot;
      if (best >= 0) {
        slot = free_slots[best];
        free_slots.erase(free_slots.begin() + best);
      } else {
        slot = static_cast<int>(slots.size());
        slots.emplace_back();
        slots.back().device = l.device;
      }
      slots[slot].blobs.push_back(b);
      slots[slot].size = std::max(slots[slot].size, size);
      slot_of[b] = slot;
      release[l.last].push_back(b);
    }
    for (const auto& b : release[i]) free_slots.push_back(slot_of.at(b));
  }

  std::unordered_set<std::string> used;
  for (const auto& kv : life) used.insert(kv.first);
  used.insert(external.begin(), external.end());
  std::unordered_map<std::string, std::string> rename;
  int k = 0;
  for (const Slot& s : slots) {
    if (s.blobs.size() < 2) continue;
    std::string name;
    do {
      name = prefix + "__m" + std::to_string(k++) + "_shared";
    } while (used.count(name));
    for (const auto& b : s.blobs) rename[b] = name;
  }

  NetDef out = net;
  auto apply = [&](google::protobuf::RepeatedPtrField<std::string>* names) {
    for (auto& n : *names) {
      auto it = rename.find(n);
      if (it != rename.end()) n = it->second;
    }
  };
  for (auto& op : *out.mutable_op()) {
    apply(op.mutable_input());
    apply(op.mutable_output());
  }
  return out;
}

}  // namespace

NetDef ComputeBlobRecyclingForDag(const NetDef& net, const std::vector<std::string>& heads,
                                  const std::vector<int>& op_indices,
                                  const std::set<std::string>& shareable_blobs,
                                  const std::string& namescope,
                                  const std::set<std::string>& dont_share_blobs,
                                  const std::map<std::string, std::vector<int64_t>>& blob_shapes) {
  std::unordered_set<std::string> in_ops;
  for (int idx : op_indices) {
    C2_ENFORCE(idx >= 0 && idx < net.op_size(), "memonger: op index ", idx,
               " out of range for a net of ", net.op_size(), " ops");
    const OperatorDef& op = net.op(idx);
    in_ops.insert(op.input().begin(), op.input().end());
    in_ops.insert(op.output().begin(), op.output().end());
  }
  const std::unordered_set<std::string> head_set(heads.begin(), heads.end());
  auto is_candidate = [&](const std::string& b) {
    return shareable_blobs.count(b) && in_ops.count(b) && !head_set.count(b) &&
           !dont_share_blobs.count(b);
  };
  return Recycle(net, is_candidate, namescope, blob_shapes);
}

NetDef OptimizeInferenceNet(const NetDef& net, const std::set<std::string>& static_blobs) {
  auto is_candidate = [&](const std::string& b) { return !static_blobs.count(b); };
  return Recycle(net, is_candidate, "", {});
}

}  // namespace memonger
}  // namespace caffe2
