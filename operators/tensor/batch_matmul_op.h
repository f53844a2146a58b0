// The shapes of BatchMatMul (contract in batch_matmul_op.cc), shared by the CPU and CUDA kernels:
// M, K, N of every product, Y's dims, and for product t (in Y's batch order) the offsets, in
// matrices, of its A and B, with broadcast batch dims repeating the same matrix.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/enforce.h"
#include "core/tensor.h"

namespace caffe2 {

struct BatchMatMulPlan {
  int64_t M = 0, K = 0, N = 0;
  int64_t count = 1;                      // number of products
  std::vector<int64_t> out_dims;          // Y's dims
  std::vector<int64_t> batch;             // Y's batch dims
  std::vector<int64_t> a_batch, b_batch;  // A's and B's batch dims, left-padded with 1s
  bool plain = true;                      // A and B have Y's batch dims: offsets are t and t

  void Offsets(int64_t t, int64_t* oa, int64_t* ob) const {
    if (plain) {
      *oa = *ob = t;
      return;
    }
    int64_t a = 0, b = 0, sa = 1, sb = 1;
    for (int i = static_cast<int>(batch.size()) - 1; i >= 0; --i) {
      const int64_t idx = t % batch[i];
      t /= batch[i];
      a += (a_batch[i] == 1 ? 0 : idx) * sa;
      b += (b_batch[i] == 1 ? 0 : idx) * sb;
      sa *= a_batch[i];
      sb *= b_batch[i];
    }
    *oa = a;
    *ob = b;
  }
};

inline BatchMatMulPlan PlanBatchMatMul(std::vector<int64_t> da, std::vector<int64_t> db,
                                       bool trans_a, bool trans_b, bool broadcast) {
  const std::vector<int64_t> a_dims = da, b_dims = db;
  if (!broadcast) {
    C2_ENFORCE(da.size() >= 2 && da.size() == db.size() &&
                   std::equal(da.begin(), da.end() - 2, db.begin()),
               "A ", Tensor::DimsString(da), " and B ", Tensor::DimsString(db),
               " must have rank >= 2 and the same batch dims (or set broadcast=1)");
  }
  C2_ENFORCE(!da.empty() && !db.empty(), "A and B must have at least one dim");
  const bool a_vec = da.size() == 1, b_vec = db.size() == 1;
  if (a_vec) da.insert(da.begin(), 1);
  if (b_vec) db.push_back(1);
  BatchMatMulPlan p;
  p.M = trans_a && !a_vec ? da[da.size() - 1] : da[da.size() - 2];
  p.K = trans_a && !a_vec ? da[da.size() - 2] : da[da.size() - 1];
  const int64_t KB = trans_b && !b_vec ? db[db.size() - 1] : db[db.size() - 2];
  p.N = trans_b && !b_vec ? db[db.size() - 2] : db[db.size() - 1];
  C2_ENFORCE(p.K == KB, "A ", Tensor::DimsString(a_dims), " has inner dim ", p.K, " but B ",
             Tensor::DimsString(b_dims), " has ", KB, " (trans_a=", trans_a, ", trans_b=", trans_b,
             ")");
  // Broadcast batch dims, aligned from the right.
  const size_t ba = da.size() - 2, bb = db.size() - 2, nb = std::max(ba, bb);
  p.batch.resize(nb);
  p.a_batch.resize(nb);
  p.b_batch.resize(nb);
  for (size_t i = 0; i < nb; ++i) {
    const int64_t x = i + ba >= nb ? da[i + ba - nb] : 1;
    const int64_t y = i + bb >= nb ? db[i + bb - nb] : 1;
    C2_ENFORCE(x == y || x == 1 || y == 1, "batch dims of A ", Tensor::DimsString(a_dims),
               " and B ", Tensor::DimsString(b_dims), " do not broadcast");
    p.batch[i] = std::max(x, y);
    p.a_batch[i] = x;
    p.b_batch[i] = y;
    p.count *= p.batch[i];
    p.plain = p.plain && x == p.batch[i] && y == p.batch[i];
  }
  p.out_dims = p.batch;
  if (!a_vec) p.out_dims.push_back(p.M);
  if (!b_vec) p.out_dims.push_back(p.N);
  return p;
}

}  // namespace caffe2
