// Three of the fused ops of ../fused.ts as TensorFlow CPU kernels, for the tensorflow backend: one
// pass each where the composites in model.ts and optim.ts dispatch 7-16 TensorFlow ops (LayerNorm and
// GELU with their gradients, the AdamW step). The same formulas as the composites and as the wasm
// module (simd-wat.ts). The fourth, Softmax's gradient, is not here: loading tfjs-node registers
// tfjs's own gradients over gradients.ts's, so its fused hook is never reached on this backend.
// `cogen setup tensorflow` compiles this file against the headers of the wheel it takes libtensorflow
// from (src/setup.ts), into a Node.js addon beside the libraries: loading it registers the ops (static
// initialisers), and tf-ops.ts registers tfjs kernels that run them through tfjs-node. CPU kernels
// only: the GPU build keeps the composites.
#include <cmath>
#include <vector>

#include <node_api.h>

#include "Eigen/Core"

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"

using namespace tensorflow;
using shape_inference::InferenceContext;

namespace {

constexpr float kLayerNormEps = 1e-5f;
// GELU, tanh approximation, as x·σ(c·x·(1 + 0.044715·x²)) with c = 2·√(2/π) (model.ts)
constexpr float kGeluC = 1.5957691216057308f;

Status SameAsInput0(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return OkStatus();
}

using Floats = Eigen::Map<const Eigen::ArrayXf>;
using FloatsOut = Eigen::Map<Eigen::ArrayXf>;

// σ(c·x·(1 + 0.044715·x²)) as an Eigen expression: Eigen's exp is vectorised, a scalar loop of
// std::exp made GELU the slowest op of a step.
template <typename X>
auto Gate(const X& x) {
  return (1.0f + (-kGeluC * x * (1.0f + 0.044715f * x.square())).exp()).inverse();
}

// The rows of a tensor over its last axis: R rows of C (rank ≥ 1, checked by the caller).
void Rows(const Tensor& x, int64_t* R, int64_t* C) {
  *C = x.dim_size(x.dims() - 1);
  *R = *C == 0 ? 0 : x.NumElements() / *C;
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

class CogenGelu : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const Floats xs(x.flat<float>().data(), x.NumElements());
    FloatsOut(y->flat<float>().data(), x.NumElements()) = xs * Gate(xs);
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
    const int64_t n = x.NumElements();
    const Floats xs(x.flat<float>().data(), n), dys(dy.flat<float>().data(), n);
    const Eigen::ArrayXf s = Gate(xs);
    FloatsOut(dx->flat<float>().data(), n) = dys * (s + xs * s * (1.0f - s) * (kGeluC * (1.0f + 3.0f * 0.044715f * xs.square())));
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
    float* yp = y->flat<float>().data();
    for (int64_t r = 0; r < R; r++) {
      const float* row = xp + r * C;
      double s = 0;
      for (int64_t c = 0; c < C; c++) s += row[c];
      const float mu = static_cast<float>(s / C);
      double q = 0;
      for (int64_t c = 0; c < C; c++) q += static_cast<double>(row[c] - mu) * (row[c] - mu);
      const float rs = 1.0f / std::sqrt(static_cast<float>(q / C) + kLayerNormEps);
      for (int64_t c = 0; c < C; c++) yp[r * C + c] = (row[c] - mu) * rs * g[c] + b[c];
      mean->flat<float>()(r) = mu;
      rstd->flat<float>()(r) = rs;
    }
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
    std::vector<double> sg(C, 0.0), sb(C, 0.0);
    for (int64_t r = 0; r < R; r++) {
      const float* row = xp + r * C;
      const float* d = dyp + r * C;
      const float mu = mean[r], rs = rstd[r];
      double a = 0, bsum = 0;
      for (int64_t c = 0; c < C; c++) {
        const float xh = (row[c] - mu) * rs, gdy = g[c] * d[c];
        a += gdy;
        bsum += static_cast<double>(gdy) * xh;
        sg[c] += static_cast<double>(d[c]) * xh;
        sb[c] += d[c];
      }
      const float ma = static_cast<float>(a / C), mb = static_cast<float>(bsum / C);
      for (int64_t c = 0; c < C; c++) {
        const float xh = (row[c] - mu) * rs;
        dxp[r * C + c] = (g[c] * d[c] - ma - xh * mb) * rs;
      }
    }
    for (int64_t c = 0; c < C; c++) {
      dg->flat<float>()(c) = static_cast<float>(sg[c]);
      db->flat<float>()(c) = static_cast<float>(sb[c]);
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

// An addon with nothing to export: loading it is what registers the ops above.
static napi_value Init(napi_env, napi_value exports) { return exports; }
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
