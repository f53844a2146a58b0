#include "distributed/gloo/pairwise_exchange.h"

#include <cstring>
#include <numeric>
#include <sstream>

#include <gloo/context.h>
#include <gloo/transport/buffer.h>
#include <gloo/transport/pair.h>

#include "distributed/gloo/common_world.h"

namespace caffe2 {

ExchangePlan::ExchangePlan(int ranks)
    : send_offset(ranks, 0), send_bytes(ranks, 0), recv_offset(ranks, 0), recv_bytes(ranks, 0) {}

size_t ExchangePlan::SendTotal() const {
  size_t end = 0;
  for (size_t q = 0; q < send_bytes.size(); ++q) {
    end = std::max(end, send_offset[q] + send_bytes[q]);
  }
  return end;
}

size_t ExchangePlan::RecvTotal() const {
  size_t end = 0;
  for (size_t q = 0; q < recv_bytes.size(); ++q) {
    end = std::max(end, recv_offset[q] + recv_bytes[q]);
  }
  return end;
}

bool ExchangePlan::operator==(const ExchangePlan& o) const {
  return send_offset == o.send_offset && send_bytes == o.send_bytes &&
         recv_offset == o.recv_offset && recv_bytes == o.recv_bytes;
}

std::string ExchangePlan::Describe() const {
  auto list = [](const std::vector<size_t>& v) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
    return os.str();
  };
  return "sends " + list(send_bytes) + " bytes, receives " + list(recv_bytes) + " bytes";
}

PairwiseExchange::PairwiseExchange(const std::shared_ptr<gloo::Context>& context,
                                   const ExchangePlan& plan)
    : gloo::Algorithm(context),
      plan_(plan),
      send_(std::max<size_t>(plan.SendTotal(), 1)),
      recv_(std::max<size_t>(plan.RecvTotal(), 1)),
      data_out_(contextSize_),
      data_in_(contextSize_),
      free_out_(contextSize_),
      free_in_(contextSize_),
      free_word_in_(contextSize_, 0) {
  const int data_slot = context_->nextSlot();
  const int free_slot = context_->nextSlot();
  for (int q = 0; q < contextSize_; ++q) {
    if (q == contextRank_) continue;
    auto& pair = getPair(q);
    if (plan_.send_bytes[q] > 0) {
      data_out_[q] = pair->createSendBuffer(data_slot, send_.data() + plan_.send_offset[q],
                                            plan_.send_bytes[q]);
    }
    if (plan_.recv_bytes[q] > 0) {
      data_in_[q] = pair->createRecvBuffer(data_slot, recv_.data() + plan_.recv_offset[q],
                                           plan_.recv_bytes[q]);
    }
    free_out_[q] = pair->createSendBuffer(free_slot, &free_word_out_, sizeof(int));
    free_in_[q] = pair->createRecvBuffer(free_slot, &free_word_in_[q], sizeof(int));
  }
}

PairwiseExchange::~PairwiseExchange() = default;

void PairwiseExchange::run() {
  const int self = contextRank_;
  if (ran_before_) {
    // This rank has unpacked the previous run: its recv staging may be written again.
    for (int q = 0; q < contextSize_; ++q) {
      if (q != self) free_out_[q]->send();
    }
    for (int q = 0; q < contextSize_; ++q) {
      if (q != self) free_in_[q]->waitRecv();
    }
    for (int q = 0; q < contextSize_; ++q) {
      if (q != self) free_out_[q]->waitSend();
    }
  }
  ran_before_ = true;
  for (int q = 0; q < contextSize_; ++q) {
    if (q != self && data_out_[q]) data_out_[q]->send();
  }
  if (plan_.send_bytes[self] > 0) {
    std::memcpy(recv_.data() + plan_.recv_offset[self], send_.data() + plan_.send_offset[self],
                plan_.send_bytes[self]);
  }
  for (int q = 0; q < contextSize_; ++q) {
    if (q != self && data_in_[q]) data_in_[q]->waitRecv();
  }
  for (int q = 0; q < contextSize_; ++q) {
    if (q != self && data_out_[q]) data_out_[q]->waitSend();
  }
}

PairwiseExchange& ExchangeOpBase::ExchangeFor(const ExchangePlan& plan) {
  CommonWorldPtr world = WorldPtr();
  if (exchange_) {
    C2_ENFORCE(plan == exchange_->plan() && world.get() == built_world_,
               "the exchange was built for a plan that ", exchange_->plan().Describe(),
               " and now needs one that ", plan.Describe(),
               " (or the common world changed). Its shapes must stay the same between iterations");
    return *exchange_;
  }
  C2_ENFORCE(plan.send_bytes.size() == static_cast<size_t>(world->size()) &&
                 plan.recv_bytes.size() == static_cast<size_t>(world->size()),
             "internal: a plan for ", plan.send_bytes.size(), " ranks in a world of ",
             world->size());
  exchange_ = std::make_unique<PairwiseExchange>(world->context, plan);
  built_world_ = world.get();
  return *exchange_;
}

}  // namespace caffe2
