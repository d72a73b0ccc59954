// What the native ops of tf-ops.cc and tf-decode.cc share: the formulas' constants, Eigen's views of
// float buffers, GELU's gate, and the ops' threads (an OpenMP team, set by the addon's setThreads).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>

#include <omp.h>

#include "Eigen/Core"

namespace cogen {

constexpr float kLayerNormEps = 1e-5f;
// GELU, tanh approximation, as x·σ(c·x·(1 + 0.044715·x²)) with c = 2·√(2/π) (model.ts)
constexpr float kGeluC = 1.5957691216057308f;

using Floats = Eigen::Map<const Eigen::ArrayXf>;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// one head's [T, dh] block of a [N·T, d] activation: rows d apart
using HeadIn = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;
using HeadOut = Eigen::Map<RowMat, 0, Eigen::OuterStride<>>;
using FloatsOut = Eigen::Map<Eigen::ArrayXf>;

// σ(c·x·(1 + 0.044715·x²)) as an Eigen expression: Eigen's exp is vectorised, a scalar loop of
// std::exp made GELU the slowest op of a step.
template <typename X>
auto Gate(const X& x) {
  return (1.0f + (-kGeluC * x * (1.0f + 0.044715f * x.square())).exp()).inverse();
}

// The threads our ops split their work over (setThreads in tf-ops.cc; solver.threads). An OpenMP
// team, not TensorFlow's intra-op pool: OpenMP's workers spin a while between parallel regions, as
// PyTorch's do, where the pool's park and must be woken for each of a step's ~100 small ops; on 2
// cores a reference step took 36-40 ms this way against 50-51 ms on the pool (TensorFlow's own ops
// on one thread beside it in both; the pool's spare thread and a spinning team slowed each other).
inline std::atomic<int> g_threads{1};

// Work under this many cost units (~cycles) runs on the calling thread: a fork and join costs more.
constexpr int64_t kSerialCost = 100000;

// Runs fn(begin, end) over units [0, total) in contiguous ranges, one per thread. Each caller makes
// its units such that a unit's result does not depend on which others share its range, so an op's
// result does not depend on the number of threads.
inline void ForEach(int64_t total, int64_t cost_per_unit, const std::function<void(int64_t, int64_t)>& fn) {
  const int threads = static_cast<int>(std::min<int64_t>(g_threads.load(std::memory_order_relaxed), total));
  if (threads <= 1 || total * cost_per_unit < kSerialCost) {
    if (total > 0) fn(0, total);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const int64_t begin = total * t / n, end = total * (t + 1) / n;
    if (begin < end) fn(begin, end);
  }
}

}  // namespace cogen
