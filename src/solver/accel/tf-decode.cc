// One decoding step of the whole model as one TensorFlow CPU op, for the tensorflow backend
// (kv-decode.ts): where model.ts's decodeStep dispatches ~125 small TensorFlow ops per token (each
// ~10-40 µs through tfjs-node, more than its arithmetic at the solver's sizes), this runs the
// embedding, every block and the tied head in one pass. The formulas are model.ts's (and tf-ops.cc's
// LayerNorm, GELU and x·w + b): pre-LayerNorm blocks, attention of each new token over its prompt's
// keys (left pads hidden), the keys of the answer tokens before it and its own, GELU MLP.
//
// The prompt's keys and values are read in place from each layer's c_attn product [B·Tp, 3d] that
// the prefill made (q, k, v side by side, as CogenAttention reads them); the answer's are one small
// tensor per earlier step, [layers, 2, N, d], which the op returns for its own token: the cache
// grows by one tensor a step, with no copy of what it holds and nothing written in place.
//
// Rows run in blocks of a fixed size, each block the whole step for its rows (a row's step reads no
// other row), on the ops' threads: the result does not depend on the number of threads.
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"

#include "tf-ops.h"

using namespace tensorflow;
using namespace cogen;

// weights: model.ts's paramShapes in order (wte [V, d], wpe [P, d], 12 per layer, ln_f's 2)
REGISTER_OP("CogenDecodeStep")
    .Input("ids: int32")                // [N] this step's tokens (row r answers prompt r / G)
    .Input("pos: int32")                // [] their position id
    .Input("pad: int32")                // [B] left pads of each prompt
    .Input("prompt: layers * float")    // per layer [B·Tp, 3d]: the prompt's c_attn product
    .Input("past: steps * float")       // per earlier answer token [layers, 2, N, d]: its keys, values
    .Input("weights: count * float")
    .Attr("heads: int >= 1")
    .Attr("layers: int >= 1")
    .Attr("steps: int >= 0")
    .Attr("count: int >= 1")
    .Output("logits: float")            // [N, V]
    .Output("kv: float");               // [layers, 2, N, d]: this token's keys and values

namespace {

constexpr int64_t kDecodeRows = 16;
constexpr int kPerLayer = 12;  // ln_1 g, b; c_attn w, b; c_proj w, b; ln_2 g, b; c_fc w, b; mlp.c_proj w, b

using Vec = Eigen::Map<const Eigen::VectorXf>;
using RowVec = Eigen::Map<const Eigen::RowVectorXf>;

// LayerNorm of each row of x [n, C] into y, as tf-ops.cc's CogenLayerNorm
void LayerNormRows(const RowMat& x, const float* g, const float* b, RowMat* y) {
  const int64_t C = x.cols();
  const Floats G(g, C), B(b, C);
  y->resize(x.rows(), C);
  for (int64_t r = 0; r < x.rows(); r++) {
    const auto row = x.row(r).array();
    const float mu = row.sum() / C;
    const float rs = 1.0f / std::sqrt((row - mu).square().sum() / C + kLayerNormEps);
    y->row(r).array() = (row - mu) * rs * G.transpose() + B.transpose();
  }
}

// y = x·w + b, w [k, m] row-major, as CogenLinear (the bias first, the product added to it)
void Linear(const RowMat& x, const float* w, const float* b, int64_t m, RowMat* y) {
  y->resize(x.rows(), m);
  y->rowwise() = RowVec(b, m);
  y->noalias() += x * Eigen::Map<const RowMat>(w, x.cols(), m);
}

struct Shape {
  int64_t N, B, G, Tp, d, H, dh, V, f, layers, steps;
};

class CogenDecodeStep : public OpKernel {
 public:
  explicit CogenDecodeStep(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("heads", &heads_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor *ids, *pos, *pad;
    OpInputList prompt, past, weights;
    OP_REQUIRES_OK(ctx, ctx->input("ids", &ids));
    OP_REQUIRES_OK(ctx, ctx->input("pos", &pos));
    OP_REQUIRES_OK(ctx, ctx->input("pad", &pad));
    OP_REQUIRES_OK(ctx, ctx->input_list("prompt", &prompt));
    OP_REQUIRES_OK(ctx, ctx->input_list("past", &past));
    OP_REQUIRES_OK(ctx, ctx->input_list("weights", &weights));
    Shape s;
    OP_REQUIRES_OK(ctx, Check(*ids, *pos, *pad, prompt, past, weights, &s));
    Tensor *logits = nullptr, *kv = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({s.N, s.V}), &logits));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({s.layers, 2, s.N, s.d}), &kv));
    std::vector<const float*> w(weights.size()), pr(prompt.size()), pa(past.size());
    for (int i = 0; i < weights.size(); i++) w[i] = weights[i].flat<float>().data();
    for (int i = 0; i < prompt.size(); i++) pr[i] = prompt[i].flat<float>().data();
    for (int i = 0; i < past.size(); i++) pa[i] = past[i].flat<float>().data();
    const int32_t *idp = ids->flat<int32_t>().data(), *padp = pad->flat<int32_t>().data();
    const int32_t at = pos->scalar<int32_t>()();
    float *lp = logits->flat<float>().data(), *kvp = kv->flat<float>().data();
    const int64_t blocks = (s.N + kDecodeRows - 1) / kDecodeRows;
    const int64_t cost = kDecodeRows * s.layers * (12 * s.d * s.d + 2 * s.d * s.f + 4 * s.d * (s.Tp + s.steps + 1)) + kDecodeRows * s.d * s.V;
    ForEach(blocks, cost, [&](int64_t first, int64_t last) {
      for (int64_t blk = first; blk < last; blk++) {
        const int64_t r0 = blk * kDecodeRows;
        Rows(s, w, pr, pa, idp + r0, padp, at, r0, std::min(kDecodeRows, s.N - r0), lp, kvp);
      }
    });
  }

 private:
  Status Check(const Tensor& ids, const Tensor& pos, const Tensor& pad, const OpInputList& prompt, const OpInputList& past,
               const OpInputList& weights, Shape* s) const {
    s->layers = prompt.size();
    s->steps = past.size();
    if (weights.size() != 4 + kPerLayer * s->layers) return errors::InvalidArgument("CogenDecodeStep: weights must be model.ts's paramShapes (4 + 12 per layer)");
    if (ids.dims() != 1 || pos.dims() != 0 || pad.dims() != 1 || pad.dim_size(0) == 0 || ids.dim_size(0) % pad.dim_size(0) != 0)
      return errors::InvalidArgument("CogenDecodeStep: ids must be [N], pos a scalar, pad [B] with B dividing N");
    const Tensor &wte = weights[0], &wpe = weights[1];
    if (wte.dims() != 2 || wpe.dims() != 2 || wpe.dim_size(1) != wte.dim_size(1)) return errors::InvalidArgument("CogenDecodeStep: wte and wpe must be [*, d]");
    s->N = ids.dim_size(0), s->B = pad.dim_size(0), s->G = s->N / s->B;
    s->V = wte.dim_size(0), s->d = wte.dim_size(1), s->H = heads_, s->dh = s->d / heads_;
    if (s->d % heads_ != 0) return errors::InvalidArgument("CogenDecodeStep: d must be a multiple of heads");
    const int32_t at = pos.scalar<int32_t>()();
    if (at < 0 || at >= wpe.dim_size(0)) return errors::InvalidArgument("CogenDecodeStep: position ", at, " outside the position table");
    for (int64_t r = 0; r < s->N; r++) {
      const int32_t id = ids.flat<int32_t>()(r);
      if (id < 0 || id >= s->V) return errors::InvalidArgument("CogenDecodeStep: token ", id, " outside [0, ", s->V, ")");
    }
    const int64_t d = s->d;
    s->f = weights[2 + 8].dims() == 2 ? weights[2 + 8].dim_size(1) : 0;
    for (int64_t l = 0; l < s->layers; l++) {
      const int64_t o = 2 + kPerLayer * l;
      const int64_t want[kPerLayer][2] = {{d, 0}, {d, 0}, {d, 3 * d}, {3 * d, 0}, {d, d}, {d, 0}, {d, 0}, {d, 0}, {d, s->f}, {s->f, 0}, {s->f, d}, {d, 0}};
      for (int k = 0; k < kPerLayer; k++) {
        const Tensor& t = weights[o + k];
        const bool ok = want[k][1] == 0 ? t.dims() == 1 && t.dim_size(0) == want[k][0] : t.dims() == 2 && t.dim_size(0) == want[k][0] && t.dim_size(1) == want[k][1];
        if (!ok) return errors::InvalidArgument("CogenDecodeStep: weight ", o + k, " has the wrong shape for d = ", d);
      }
    }
    const Tensor &gf = weights[2 + kPerLayer * s->layers], &bf = weights[3 + kPerLayer * s->layers];
    if (gf.NumElements() != d || bf.NumElements() != d) return errors::InvalidArgument("CogenDecodeStep: ln_f must have d entries");
    if (prompt[0].dims() != 2 || prompt[0].dim_size(0) % s->B != 0) return errors::InvalidArgument("CogenDecodeStep: prompt must be [B*Tp, 3d]");
    s->Tp = prompt[0].dim_size(0) / s->B;
    for (int64_t l = 0; l < s->layers; l++) {
      if (prompt[l].shape() != TensorShape({s->B * s->Tp, 3 * d})) return errors::InvalidArgument("CogenDecodeStep: every prompt must be [B*Tp, 3d]");
    }
    for (int64_t i = 0; i < s->steps; i++) {
      if (past[i].shape() != TensorShape({s->layers, 2, s->N, d})) return errors::InvalidArgument("CogenDecodeStep: every past step must be [layers, 2, N, d]");
    }
    for (int64_t b = 0; b < s->B; b++) {
      const int32_t p = pad.flat<int32_t>()(b);
      if (p < 0 || p >= s->Tp) return errors::InvalidArgument("CogenDecodeStep: pad ", p, " must leave a key of its prompt");
    }
    return OkStatus();
  }

  // The step for rows r0 .. r0 + n: logits into lp, this token's keys and values into kvp.
  static void Rows(const Shape& s, const std::vector<const float*>& w, const std::vector<const float*>& pr, const std::vector<const float*>& pa,
                   const int32_t* ids, const int32_t* pad, int32_t at, int64_t r0, int64_t n, float* lp, float* kvp) {
    const int64_t d = s.d, dh = s.dh;
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    RowMat x(n, d), a, qkv, o(n, d), y, hid;
    for (int64_t r = 0; r < n; r++) x.row(r) = RowVec(w[0] + ids[r] * d, d) + RowVec(w[1] + at * d, d);
    Eigen::VectorXf sc(s.Tp + s.steps + 1);
    for (int64_t l = 0; l < s.layers; l++) {
      const float* const* W = w.data() + 2 + kPerLayer * l;
      LayerNormRows(x, W[0], W[1], &a);
      Linear(a, W[2], W[3], 3 * d, &qkv);
      for (int64_t r = 0; r < n; r++) {
        const int64_t row = r0 + r, b = row / s.G, p0 = pad[b];
        // this token's keys and values, for the steps after it
        Eigen::Map<Eigen::RowVectorXf>(kvp + ((l * 2 + 0) * s.N + row) * d, d) = qkv.row(r).segment(d, d);
        Eigen::Map<Eigen::RowVectorXf>(kvp + ((l * 2 + 1) * s.N + row) * d, d) = qkv.row(r).segment(2 * d, d);
        for (int64_t h = 0; h < s.H; h++) {
          const Vec q(qkv.row(r).data() + h * dh, dh);
          const float* pk = pr[l] + (b * s.Tp) * 3 * d + h * dh;
          const int64_t np = s.Tp - p0, L = np + s.steps + 1;
          const HeadIn Kp(pk + p0 * 3 * d + d, np, dh, Eigen::OuterStride<>(3 * d)), Vp(pk + p0 * 3 * d + 2 * d, np, dh, Eigen::OuterStride<>(3 * d));
          sc.head(np).noalias() = Kp * q;
          for (int64_t t = 0; t < s.steps; t++) sc(np + t) = Vec(pa[t] + ((l * 2 + 0) * s.N + row) * d + h * dh, dh).dot(q);
          sc(L - 1) = Vec(qkv.row(r).data() + d + h * dh, dh).dot(q);
          auto e = sc.head(L).array();
          e *= scale;
          e = (e - e.maxCoeff()).exp();
          e /= e.sum();
          auto out = o.row(r).segment(h * dh, dh);
          out.noalias() = sc.head(np).transpose() * Vp;
          for (int64_t t = 0; t < s.steps; t++) out += sc(np + t) * RowVec(pa[t] + ((l * 2 + 1) * s.N + row) * d + h * dh, dh);
          out += sc(L - 1) * RowVec(qkv.row(r).data() + 2 * d + h * dh, dh);
        }
      }
      Linear(o, W[4], W[5], d, &y);
      x += y;
      LayerNormRows(x, W[6], W[7], &a);
      Linear(a, W[8], W[9], s.f, &hid);
      hid.array() *= Gate(hid.array());
      Linear(hid, W[10], W[11], d, &y);
      x += y;
    }
    const int64_t lf = 2 + kPerLayer * s.layers;
    LayerNormRows(x, w[lf], w[lf + 1], &a);
    Eigen::Map<RowMat>(lp + r0 * s.V, n, s.V).noalias() = a * Eigen::Map<const RowMat>(w[0], s.V, d).transpose();
  }

  int64_t heads_;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("CogenDecodeStep").Device(DEVICE_CPU), CogenDecodeStep);
