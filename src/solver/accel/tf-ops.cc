// The fused ops of ../fused.ts as TensorFlow CPU kernels, for the tensorflow backend: one pass each
// where tfjs dispatches 5-16 TensorFlow ops. LayerNorm and GELU with their gradients and the AdamW
// step (tfjs has no such op), with the same formulas as the composites and as the wasm module
// (simd-wat.ts); and, for their many small ops, causal attention over the c_attn product, x·w + b
// and the targets' log-probs, each with its gradient. Softmax's gradient is not here: loading tfjs-node registers
// tfjs's own gradients over gradients.ts's, so its fused hook is never reached on this backend.
// `cogen setup tensorflow` compiles this file against the headers of the wheel it takes libtensorflow
// from (src/setup/ops.ts), into a Node.js addon beside the libraries: loading it registers the ops (static
// initialisers), and tf-ops.ts registers tfjs kernels that run them through tfjs-node. CPU kernels
// only: the GPU build keeps the composites. tf-decode.cc (a whole decoding step) is compiled into the
// same addon; tf-ops.h holds what the two share.
#include <vector>

#include <node_api.h>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"

#include "tf-ops.h"

using namespace tensorflow;
using namespace cogen;
using shape_inference::InferenceContext;

namespace {

Status SameAsInput0(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return OkStatus();
}

// The rows of a tensor over its last axis: R rows of C (rank ≥ 1, checked by the caller).
void Rows(const Tensor& x, int64_t* R, int64_t* C) {
  *C = x.dim_size(x.dims() - 1);
  *R = *C == 0 ? 0 : x.NumElements() / *C;
}

// Elementwise work in blocks of kBlock floats at fixed offsets: fn(at, len) for each, on the
// ops' threads. Fixed, so that each element goes through the same code (Eigen's vectorised body
// or its scalar edges, whose exp can differ in the last bit) whatever the number of threads.
constexpr int64_t kBlock = 1024;
void ForEachBlock(int64_t n, int64_t cost_per_element, const std::function<void(int64_t, int64_t)>& fn) {
  ForEach((n + kBlock - 1) / kBlock, cost_per_element * kBlock, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; b++) fn(b * kBlock, std::min(kBlock, n - b * kBlock));
  });
}

// The attention's shapes from qkv [N·T, 3d] and mask [Nm, 1, T, T] (Nm = 1 or N), checked.
struct AttentionShape {
  int64_t N, T, d, H, dh, Nm;
};

Status AttentionShapeOf(const Tensor& qkv, const Tensor& mask, int64_t heads, AttentionShape* s) {
  if (qkv.dims() != 2 || mask.dims() != 4 || mask.dim_size(1) != 1 || mask.dim_size(2) != mask.dim_size(3))
    return errors::InvalidArgument("Cogen attention: qkv must be [N*T, 3d] and mask [N or 1, 1, T, T]");
  s->T = mask.dim_size(2);
  s->d = qkv.dim_size(1) / 3;
  s->H = heads;
  if (s->T == 0 || heads <= 0 || qkv.dim_size(0) % s->T != 0 || qkv.dim_size(1) % 3 != 0 || s->d % heads != 0)
    return errors::InvalidArgument("Cogen attention: qkv's rows must be a multiple of T, its columns of 3, and d of heads");
  s->N = qkv.dim_size(0) / s->T;
  s->dh = s->d / heads;
  s->Nm = mask.dim_size(0);
  if (s->Nm != 1 && s->Nm != s->N) return errors::InvalidArgument("Cogen attention: mask's first axis must be 1 or N");
  return OkStatus();
}

}  // namespace

REGISTER_OP("CogenGelu").Input("x: float").Output("y: float").SetShapeFn(SameAsInput0);
REGISTER_OP("CogenGeluGrad").Input("x: float").Input("dy: float").Output("dx: float").SetShapeFn(SameAsInput0);
REGISTER_OP("CogenLayerNorm").Input("x: float").Input("g: float").Input("b: float")
    .Output("y: float").Output("mean: float").Output("rstd: float");
REGISTER_OP("CogenLayerNormGrad").Input("x: float").Input("g: float").Input("mean: float").Input("rstd: float").Input("dy: float")
    .Output("dx: float").Output("dg: float").Output("db: float");
// hyper: lr, beta1, 1 - beta1, beta2, 1 - beta2, eps, decay, bc1, bc2 (as the composite's float32 scalars)
REGISTER_OP("CogenAdamW").Input("p: float").Input("g: float").Input("m: float").Input("v: float").Input("scale: float").Input("hyper: float")
    .Output("p_out: float").Output("m_out: float").Output("v_out: float");

// x·w + b, x [n, k], w [k, m], b [m] (model.ts's linear): one op where tfjs's fused matMul runs five
// on this backend (reshapes to rank 3, the product, the bias add) and its gradient ten. Eigen's
// products, built for this machine, are as fast as TensorFlow's own at these shapes. Rows go in
// blocks of a fixed size, so the result does not depend on the number of threads.
REGISTER_OP("CogenLinear").Input("x: float").Input("w: float").Input("b: float").Output("y: float");
// dx = dy·wᵀ, dw = xᵀ·dy, db = Σ dy over rows (dw and db summed per row block, then over the blocks in order)
REGISTER_OP("CogenLinearGrad").Input("x: float").Input("w: float").Input("dy: float")
    .Output("dx: float").Output("dw: float").Output("db: float");

constexpr int64_t kLinearRows = 256;

static Status LinearShapes(const Tensor& x, const Tensor& w, int64_t m, const char* op) {
  if (x.dims() != 2 || w.dims() != 2 || w.dim_size(0) != x.dim_size(1) || w.dim_size(1) != m)
    return errors::InvalidArgument(op, ": x must be [n, k], w [k, m], and the bias or dy have m columns");
  return OkStatus();
}

class CogenLinear : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &x = ctx->input(0), &w = ctx->input(1), &b = ctx->input(2);
    OP_REQUIRES(ctx, b.dims() == 1, errors::InvalidArgument("CogenLinear: b must be [m]"));
    const int64_t m = b.dim_size(0);
    OP_REQUIRES_OK(ctx, LinearShapes(x, w, m, "CogenLinear"));
    const int64_t n = x.dim_size(0), k = x.dim_size(1);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({n, m}), &y));
    const float *xp = x.flat<float>().data(), *wp = w.flat<float>().data(), *bp = b.flat<float>().data();
    float* yp = y->flat<float>().data();
    const Eigen::Map<const RowMat> W(wp, k, m);
    const Eigen::Map<const Eigen::RowVectorXf> B(bp, m);
    ForEach((n + kLinearRows - 1) / kLinearRows, 2 * kLinearRows * k * m, [&](int64_t first, int64_t last) {
      for (int64_t blk = first; blk < last; blk++) {
        const int64_t r0 = blk * kLinearRows, rn = std::min(kLinearRows, n - r0);
        Eigen::Map<RowMat> Y(yp + r0 * m, rn, m);
        Y.rowwise() = B;
        Y.noalias() += Eigen::Map<const RowMat>(xp + r0 * k, rn, k) * W;
      }
    });
  }
};

class CogenLinearGrad : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &x = ctx->input(0), &w = ctx->input(1), &dy = ctx->input(2);
    OP_REQUIRES(ctx, dy.dims() == 2 && dy.dim_size(0) == x.dim_size(0), errors::InvalidArgument("CogenLinearGrad: dy must be [n, m]"));
    const int64_t m = dy.dim_size(1);
    OP_REQUIRES_OK(ctx, LinearShapes(x, w, m, "CogenLinearGrad"));
    const int64_t n = x.dim_size(0), k = x.dim_size(1), blocks = (n + kLinearRows - 1) / kLinearRows;
    Tensor *dx = nullptr, *dw = nullptr, *db = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &dx));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, w.shape(), &dw));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({m}), &db));
    const float *xp = x.flat<float>().data(), *wp = w.flat<float>().data(), *dyp = dy.flat<float>().data();
    float* dxp = dx->flat<float>().data();
    const Eigen::Map<const RowMat> W(wp, k, m);
    std::vector<RowMat> pw(blocks);
    std::vector<Eigen::RowVectorXf> pb(blocks);
    ForEach(blocks, 4 * kLinearRows * k * m, [&](int64_t first, int64_t last) {
      for (int64_t blk = first; blk < last; blk++) {
        const int64_t r0 = blk * kLinearRows, rn = std::min(kLinearRows, n - r0);
        const Eigen::Map<const RowMat> X(xp + r0 * k, rn, k), dY(dyp + r0 * m, rn, m);
        Eigen::Map<RowMat>(dxp + r0 * k, rn, k).noalias() = dY * W.transpose();
        pw[blk].noalias() = X.transpose() * dY;
        pb[blk] = dY.colwise().sum();
      }
    });
    Eigen::Map<RowMat> dW(dw->flat<float>().data(), k, m);
    Eigen::Map<Eigen::RowVectorXf> dB(db->flat<float>().data(), m);
    dW.setZero();
    dB.setZero();
    for (int64_t blk = 0; blk < blocks; blk++) {
      dW += pw[blk];
      dB += pb[blk];
    }
  }
};

// The targets' log-probabilities and the entropies of rows of logits z [n, V] (train-step.ts's
// logProbs): lsm = z − logsumexp(z), logp = lsm[target], ent = −Σ exp(lsm)·lsm, as stats [2, n]
// (logp, then ent); lsm is kept for the gradient. One pass per row where tfjs's log-softmax, one-hot
// pick and entropy take ~12 ops and their gradients as many.
REGISTER_OP("CogenTargetLogp").Input("z: float").Input("targets: int32").Output("stats: float").Output("lsm: float");
// dz = dlogp·(onehot − p) − dent·p·(lsm + ent), p = exp(lsm)
REGISTER_OP("CogenTargetLogpGrad").Input("lsm: float").Input("targets: int32").Input("stats: float").Input("dstats: float")
    .Output("dz: float");

class CogenTargetLogp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &z = ctx->input(0), &targets = ctx->input(1);
    OP_REQUIRES(ctx, z.dims() == 2 && targets.dims() == 1 && targets.dim_size(0) == z.dim_size(0) && z.dim_size(1) > 0,
                errors::InvalidArgument("CogenTargetLogp: z must be [n, V > 0] and targets [n]"));
    const int64_t n = z.dim_size(0), V = z.dim_size(1);
    const int32_t* tp = targets.flat<int32_t>().data();
    for (int64_t r = 0; r < n; r++)
      OP_REQUIRES(ctx, tp[r] >= 0 && tp[r] < V, errors::InvalidArgument("CogenTargetLogp: target ", tp[r], " outside [0, ", V, ")"));
    Tensor *stats = nullptr, *lsm = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({2, n}), &stats));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, z.shape(), &lsm));
    const float* zp = z.flat<float>().data();
    float *sp = stats->flat<float>().data(), *lp = lsm->flat<float>().data();
    ForEach(n, 20 * V, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; r++) {
        const Floats row(zp + r * V, V);
        const float m = row.maxCoeff();
        FloatsOut out(lp + r * V, V);
        out = row - (m + std::log((row - m).exp().sum()));
        sp[r] = out(tp[r]);
        sp[n + r] = -(out.exp() * out).sum();
      }
    });
  }
};

class CogenTargetLogpGrad : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &lsm = ctx->input(0), &targets = ctx->input(1), &stats = ctx->input(2), &dstats = ctx->input(3);
    OP_REQUIRES(ctx, lsm.dims() == 2 && targets.dims() == 1 && targets.dim_size(0) == lsm.dim_size(0) &&
                         stats.shape() == TensorShape({2, lsm.dim_size(0)}) && dstats.shape() == stats.shape(),
                errors::InvalidArgument("CogenTargetLogpGrad: inputs of mismatched shapes"));
    const int64_t n = lsm.dim_size(0), V = lsm.dim_size(1);
    Tensor* dz = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, lsm.shape(), &dz));
    const float *lp = lsm.flat<float>().data(), *sp = stats.flat<float>().data(), *dp = dstats.flat<float>().data();
    const int32_t* tp = targets.flat<int32_t>().data();
    float* out = dz->flat<float>().data();
    ForEach(n, 10 * V, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; r++) {
        const Floats row(lp + r * V, V);
        const float dlogp = dp[r], dent = dp[n + r], ent = sp[n + r];
        FloatsOut d(out + r * V, V);
        d = -row.exp() * (dlogp + dent * (row + ent));
        d(tp[r]) += dlogp;
      }
    });
  }
};

// Causal self-attention over the heads of qkv [N·T, 3d] (q, k, v side by side, as one product with
// c_attn makes them; head h in columns h·dh .. h·dh + dh of each), as model.ts's composite:
// p = softmax(q·kᵀ·scale + mask) per (row, head), o = p·v, merged into [N·T, d]. p [N, H, T, T] is
// kept for the gradient. One (row, head) pair per unit of work: no split of qkv, no transposes to
// split and merge the heads, and the pairs run on the ops' threads.
REGISTER_OP("CogenAttention").Input("qkv: float").Input("mask: float").Attr("heads: int").Output("o: float").Output("p: float");
// dv = pᵀ·do; ds = p ⊙ (do·vᵀ − rowsum(p ⊙ do·vᵀ)); dq = ds·k·scale; dk = dsᵀ·q·scale, into dqkv [N·T, 3d]
REGISTER_OP("CogenAttentionGrad").Input("qkv: float").Input("p: float").Input("do: float").Attr("heads: int").Output("dqkv: float");

class CogenAttention : public OpKernel {
 public:
  explicit CogenAttention(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, c->GetAttr("heads", &heads_)); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor &qkv = ctx->input(0), &mask = ctx->input(1);
    AttentionShape s;
    OP_REQUIRES_OK(ctx, AttentionShapeOf(qkv, mask, heads_, &s));
    Tensor *o = nullptr, *p = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({s.N * s.T, s.d}), &o));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({s.N, s.H, s.T, s.T}), &p));
    const float *in = qkv.flat<float>().data(), *mp = mask.flat<float>().data();
    float *op = o->flat<float>().data(), *pp = p->flat<float>().data();
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.dh));
    const int64_t T = s.T, TT = T * T, d = s.d, dh = s.dh;
    ForEach(s.N * s.H, 6 * TT * dh, [&](int64_t begin, int64_t end) {
      const Eigen::OuterStride<> st3(3 * d), st(d);
      for (int64_t u = begin; u < end; u++) {
        const int64_t n = u / s.H, h = u % s.H, at = n * T * 3 * d + h * dh;
        const HeadIn Q(in + at, T, dh, st3), K(in + at + d, T, dh, st3), V(in + at + 2 * d, T, dh, st3);
        Eigen::Map<RowMat> P(pp + u * TT, T, T);
        P.noalias() = Q * K.transpose();
        P *= scale;
        P += Eigen::Map<const RowMat>(mp + (s.Nm == 1 ? 0 : n) * TT, T, T);
        for (int64_t t = 0; t < T; t++) {
          auto row = P.row(t).array();
          row = (row - row.maxCoeff()).exp();
          row /= row.sum();
        }
        HeadOut(op + n * T * d + h * dh, T, dh, st).noalias() = P * V;
      }
    });
  }

 private:
  int64_t heads_;
};

class CogenAttentionGrad : public OpKernel {
 public:
  explicit CogenAttentionGrad(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, c->GetAttr("heads", &heads_)); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor &qkv = ctx->input(0), &p = ctx->input(1), &dout = ctx->input(2);
    OP_REQUIRES(ctx, qkv.dims() == 2 && qkv.dim_size(1) % 3 == 0 && p.dims() == 4 && p.dim_size(1) == heads_ && p.dim_size(2) == p.dim_size(3),
                errors::InvalidArgument("CogenAttentionGrad: qkv must be [N*T, 3d] and p [N, heads, T, T]"));
    const int64_t N = p.dim_size(0), T = p.dim_size(2), d = qkv.dim_size(1) / 3, H = heads_, dh = d / H, TT = T * T;
    OP_REQUIRES(ctx, qkv.dim_size(0) == N * T && d % H == 0 && dout.dims() == 2 && dout.dim_size(0) == N * T && dout.dim_size(1) == d,
                errors::InvalidArgument("CogenAttentionGrad: inputs of mismatched shapes"));
    Tensor* dqkv = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, qkv.shape(), &dqkv));
    const float *in = qkv.flat<float>().data(), *pp = p.flat<float>().data(), *dop = dout.flat<float>().data();
    float* g = dqkv->flat<float>().data();
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    ForEach(N * H, 10 * TT * dh, [&](int64_t begin, int64_t end) {
      const Eigen::OuterStride<> st3(3 * d), st(d);
      RowMat dS(T, T);
      for (int64_t u = begin; u < end; u++) {
        const int64_t n = u / H, h = u % H, at = n * T * 3 * d + h * dh;
        const HeadIn Q(in + at, T, dh, st3), K(in + at + d, T, dh, st3), V(in + at + 2 * d, T, dh, st3);
        const HeadIn dO(dop + n * T * d + h * dh, T, dh, st);
        const Eigen::Map<const RowMat> P(pp + u * TT, T, T);
        HeadOut(g + at + 2 * d, T, dh, st3).noalias() = P.transpose() * dO;
        dS.noalias() = dO * V.transpose();
        for (int64_t t = 0; t < T; t++) {
          const float c = (P.row(t).array() * dS.row(t).array()).sum();
          dS.row(t).array() = P.row(t).array() * (dS.row(t).array() - c) * scale;
        }
        HeadOut(g + at, T, dh, st3).noalias() = dS * K;
        HeadOut(g + at + d, T, dh, st3).noalias() = dS.transpose() * Q;
      }
    });
  }

 private:
  int64_t heads_;
};

class CogenGelu : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const float* xp = x.flat<float>().data();
    float* yp = y->flat<float>().data();
    ForEachBlock(x.NumElements(), 30, [&](int64_t at, int64_t len) {
      const Floats xs(xp + at, len);
      FloatsOut(yp + at, len) = xs * Gate(xs);
    });
  }
};

// d/dx x·σ(z) = σ + x·σ·(1 − σ)·z', z' = c·(1 + 3·0.044715·x²)
class CogenGeluGrad : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    OP_REQUIRES(ctx, x.shape() == dy.shape(), errors::InvalidArgument("CogenGeluGrad: x and dy differ in shape"));
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &dx));
    const float *xp = x.flat<float>().data(), *dyp = dy.flat<float>().data();
    float* dxp = dx->flat<float>().data();
    ForEachBlock(x.NumElements(), 40, [&](int64_t at, int64_t len) {
      // σ of one block, on the stack: it stays in the L1 cache
      Eigen::Array<float, Eigen::Dynamic, 1, 0, kBlock, 1> s;
      const Floats xs(xp + at, len), dys(dyp + at, len);
      s = Gate(xs);
      FloatsOut(dxp + at, len) = dys * (s + xs * s * (1.0f - s) * (kGeluC * (1.0f + 3.0f * 0.044715f * xs.square())));
    });
  }
};

// x̂ = (x − μ)·r, r = 1/√(σ² + ε), y = x̂·g + b; μ and r are kept for the gradient.
class CogenLayerNorm : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() >= 1, errors::InvalidArgument("needs rank >= 1"));
    int64_t R, C;
    Rows(x, &R, &C);
    OP_REQUIRES(ctx, ctx->input(1).NumElements() == C && ctx->input(2).NumElements() == C,
                errors::InvalidArgument("CogenLayerNorm: g and b must have the last axis' size"));
    Tensor *y = nullptr, *mean = nullptr, *rstd = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({R}), &mean));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({R}), &rstd));
    const float* xp = x.flat<float>().data();
    const float* g = ctx->input(1).flat<float>().data();
    const float* b = ctx->input(2).flat<float>().data();
    float *yp = y->flat<float>().data(), *mp = mean->flat<float>().data(), *rp = rstd->flat<float>().data();
    const Floats G(g, C), B(b, C);
    ForEach(R, 8 * C, [&](int64_t begin, int64_t end) {
      // per row, in float with Eigen's vectorised sums (a row is short: C = d)
      for (int64_t r = begin; r < end; r++) {
        const Floats row(xp + r * C, C);
        const float mu = row.sum() / C;
        const float rs = 1.0f / std::sqrt((row - mu).square().sum() / C + kLayerNormEps);
        FloatsOut(yp + r * C, C) = (row - mu) * rs * G + B;
        mp[r] = mu;
        rp[r] = rs;
      }
    });
  }
};

// dx = r·(g·dy − mean(g·dy) − x̂·mean(g·dy·x̂)), dg = Σ dy·x̂, db = Σ dy (sums over rows)
class CogenLayerNormGrad : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& dy = ctx->input(4);
    OP_REQUIRES(ctx, x.dims() >= 1, errors::InvalidArgument("needs rank >= 1"));
    int64_t R, C;
    Rows(x, &R, &C);
    OP_REQUIRES(ctx, x.shape() == dy.shape() && ctx->input(1).NumElements() == C && ctx->input(2).NumElements() == R &&
                         ctx->input(3).NumElements() == R,
                errors::InvalidArgument("CogenLayerNormGrad: inputs of mismatched shapes"));
    Tensor *dx = nullptr, *dg = nullptr, *db = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &dx));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({C}), &dg));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({C}), &db));
    const float* xp = x.flat<float>().data();
    const float* g = ctx->input(1).flat<float>().data();
    const float* mean = ctx->input(2).flat<float>().data();
    const float* rstd = ctx->input(3).flat<float>().data();
    const float* dyp = dy.flat<float>().data();
    float* dxp = dx->flat<float>().data();
    // dg and db are sums over rows: each of a fixed number of row blocks sums its own (in float), and
    // the blocks are added in order (in double), so the result does not depend on the number of threads
    const int64_t blocks = std::min<int64_t>(R, 32), per = blocks == 0 ? 0 : (R + blocks - 1) / blocks;
    Eigen::ArrayXXf sg = Eigen::ArrayXXf::Zero(C, blocks), sb = Eigen::ArrayXXf::Zero(C, blocks);
    const Floats G(g, C);
    ForEach(blocks, per * 12 * C, [&](int64_t first, int64_t last) {
      Eigen::ArrayXf xh(C), gdy(C);
      for (int64_t k = first; k < last; k++) {
        for (int64_t r = k * per; r < std::min(R, (k + 1) * per); r++) {
          const Floats row(xp + r * C, C), d(dyp + r * C, C);
          const float rs = rstd[r];
          xh = (row - mean[r]) * rs;
          gdy = G * d;
          const float ma = gdy.sum() / C, mb = (gdy * xh).sum() / C;
          FloatsOut(dxp + r * C, C) = (gdy - ma - xh * mb) * rs;
          sg.col(k) += d * xh;
          sb.col(k) += d;
        }
      }
    });
    for (int64_t c = 0; c < C; c++) {
      double tg = 0, tb = 0;
      for (int64_t k = 0; k < blocks; k++) {
        tg += sg(c, k);
        tb += sb(c, k);
      }
      dg->flat<float>()(c) = static_cast<float>(tg);
      db->flat<float>()(c) = static_cast<float>(tb);
    }
  }
};

// optim.ts's step, in its order: g = g0·scale; m' = m·β1 + g·(1 − β1); v' = v·β2 + g²·(1 − β2);
// p' = p·decay − ((m'/bc1) / (√(v'/bc2) + ε))·lr
class CogenAdamW : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &p = ctx->input(0), &g = ctx->input(1), &m = ctx->input(2), &v = ctx->input(3);
    const Tensor &scale = ctx->input(4), &hyper = ctx->input(5);
    OP_REQUIRES(ctx, g.shape() == p.shape() && m.shape() == p.shape() && v.shape() == p.shape(),
                errors::InvalidArgument("CogenAdamW: p, g, m and v differ in shape"));
    OP_REQUIRES(ctx, scale.NumElements() == 1 && hyper.NumElements() == 9,
                errors::InvalidArgument("CogenAdamW: scale is one float and hyper nine"));
    Tensor *po = nullptr, *mo = nullptr, *vo = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, p.shape(), &po));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, p.shape(), &mo));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, p.shape(), &vo));
    const float* h = hyper.flat<float>().data();
    const float lr = h[0], b1 = h[1], nb1 = h[2], b2 = h[3], nb2 = h[4], eps = h[5], decay = h[6], bc1 = h[7], bc2 = h[8];
    const float sc = scale.flat<float>()(0);
    const float *pp = p.flat<float>().data(), *gp = g.flat<float>().data(), *mp = m.flat<float>().data(), *vp = v.flat<float>().data();
    float *pop = po->flat<float>().data(), *mop = mo->flat<float>().data(), *vop = vo->flat<float>().data();
    for (int64_t i = 0, n = p.NumElements(); i < n; i++) {
      const float gi = gp[i] * sc;
      const float m1 = mp[i] * b1 + gi * nb1;
      const float v1 = vp[i] * b2 + (gi * gi) * nb2;
      mop[i] = m1;
      vop[i] = v1;
      const float decayed = decay != 1.0f ? pp[i] * decay : pp[i];
      pop[i] = decayed - ((m1 / bc1) / (std::sqrt(v1 / bc2) + eps)) * lr;
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("CogenGelu").Device(DEVICE_CPU), CogenGelu);
REGISTER_KERNEL_BUILDER(Name("CogenGeluGrad").Device(DEVICE_CPU), CogenGeluGrad);
REGISTER_KERNEL_BUILDER(Name("CogenLayerNorm").Device(DEVICE_CPU), CogenLayerNorm);
REGISTER_KERNEL_BUILDER(Name("CogenLayerNormGrad").Device(DEVICE_CPU), CogenLayerNormGrad);
REGISTER_KERNEL_BUILDER(Name("CogenAdamW").Device(DEVICE_CPU), CogenAdamW);
REGISTER_KERNEL_BUILDER(Name("CogenLinear").Device(DEVICE_CPU), CogenLinear);
REGISTER_KERNEL_BUILDER(Name("CogenLinearGrad").Device(DEVICE_CPU), CogenLinearGrad);
REGISTER_KERNEL_BUILDER(Name("CogenTargetLogp").Device(DEVICE_CPU), CogenTargetLogp);
REGISTER_KERNEL_BUILDER(Name("CogenTargetLogpGrad").Device(DEVICE_CPU), CogenTargetLogpGrad);
REGISTER_KERNEL_BUILDER(Name("CogenAttention").Device(DEVICE_CPU), CogenAttention);
REGISTER_KERNEL_BUILDER(Name("CogenAttentionGrad").Device(DEVICE_CPU), CogenAttentionGrad);

// Loading the addon registers the ops above (and tf-decode.cc's). It exports setThreads(n): the
// threads the ops split their work over from then on (n ≥ 1); and abi, the version of the ops' set
// and signatures, which tf-ops.ts checks so that an addon built by an older cogen is refused.
static const int32_t kOpsAbi = 2;

static napi_value SetThreads(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  int32_t n = 0;
  if (napi_get_cb_info(env, info, &argc, &arg, nullptr, nullptr) != napi_ok || argc != 1 || napi_get_value_int32(env, arg, &n) != napi_ok || n < 1) {
    napi_throw_range_error(env, nullptr, "setThreads takes one integer ≥ 1");
    return nullptr;
  }
  g_threads.store(n);
  return nullptr;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "setThreads", NAPI_AUTO_LENGTH, SetThreads, nullptr, &fn) == napi_ok)
    napi_set_named_property(env, exports, "setThreads", fn);
  napi_value abi;
  if (napi_create_int32(env, kOpsAbi, &abi) == napi_ok) napi_set_named_property(env, exports, "abi", abi);
  return exports;
}
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
