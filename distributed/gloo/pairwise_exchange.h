// PairwiseExchange: an all-to-all with a byte count per peer, over staging buffers it owns, and the
// operator frame of the ops built on it (AllgatherBatch, ReduceScatterBatch, ColumnShardsToBatch,
// BatchToColumnShards: docs/distributed.md, "Hybrid parallelism").
//
// Every rank sends send_bytes[q] bytes from its send staging (at send_offset[q]) to each rank q and
// receives recv_bytes[q] bytes from q into its recv staging (at recv_offset[q]); its own part is a
// local copy. The peers' byte counts must match (what p sends to q is what q expects from p).
//
// Gloo's pairs write straight into the peer's memory, so a rank may only send once the peer has
// read its previous data: from the second run on, every rank first tells each peer that its recv
// staging is free again and waits for the same word from each peer. The ops pack and unpack around
// a run, so the inputs and outputs themselves may move between iterations; only the byte counts
// must stay (they shape the pairs' buffers, which are matched to the peers' and cannot be rebuilt
// on one rank alone).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gloo/algorithm.h>

#include "distributed/gloo/collective_op.h"

namespace gloo {
namespace transport {
class Buffer;
}
}  // namespace gloo

namespace caffe2 {

// Byte counts and offsets, indexed by rank.
struct ExchangePlan {
  std::vector<size_t> send_offset, send_bytes, recv_offset, recv_bytes;

  // Room for `ranks` peers, every count zero.
  explicit ExchangePlan(int ranks = 0);
  size_t SendTotal() const;
  size_t RecvTotal() const;
  bool operator==(const ExchangePlan& o) const;
  std::string Describe() const;  // "sends [..] bytes, receives [..] bytes"
};

class PairwiseExchange final : public gloo::Algorithm {
 public:
  PairwiseExchange(const std::shared_ptr<gloo::Context>& context, const ExchangePlan& plan);
  ~PairwiseExchange() override;

  char* send_data() { return send_.data(); }
  const char* recv_data() const { return recv_.data(); }
  const ExchangePlan& plan() const { return plan_; }

  void run() override;

 private:
  ExchangePlan plan_;
  std::vector<char> send_, recv_;
  std::vector<std::unique_ptr<gloo::transport::Buffer>> data_out_, data_in_, free_out_, free_in_;
  int free_word_out_ = 0;
  std::vector<int> free_word_in_;
  bool ran_before_ = false;
};

// The frame of the exchange ops: input 0 is the common world; RunCollective computes a plan,
// packs the send staging, runs the exchange and unpacks the recv staging.
class ExchangeOpBase : public GlooOpBase {
 public:
  using GlooOpBase::GlooOpBase;

 protected:
  // The exchange for `plan`, built on the first run; later runs must bring the same plan.
  PairwiseExchange& ExchangeFor(const ExchangePlan& plan);

  // The world's size and this process's rank in it.
  int Ranks() { return World().size(); }
  int Rank() { return World().rank(); }

 private:
  std::unique_ptr<PairwiseExchange> exchange_;
  const void* built_world_ = nullptr;
};

}  // namespace caffe2
