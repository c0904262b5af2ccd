"""Would a fused kernel bring the Dombi t-norm's value and gradient near the product's?

A measurement, not part of the package: Dombi's T(a, b) (p = 0.5) forward and backward as one
C++ loop each over ATen's 8-wide AVX2 `Vectorized<float>` (Sleef exp and log; x**e as
exp(e log x)), compiled with torch.utils.cpp_extension, against the product a * b and against
the package's `families.t_norm` (eager PyTorch, closed-form backward), on 64 x 64 x 10 float32
inputs at one thread (median of 200 forward + backward passes after 20 warm-up, three rounds).

    python scripts/bench/fused_dombi.py > results/bench/fused_kernel/measured.txt

Needs g++ and the torch headers (the compiled module is cached in ~/.cache/torch_extensions).
"""

import statistics
import time

import torch
from torch.utils.cpp_extension import load_inline

from dfl_bench.operators.families import t_norm

src = r"""
#include <torch/extension.h>
#include <ATen/cpu/vec/vec.h>
#include <ATen/cpu/vec/functional.h>
using V = at::vec::Vectorized<float>;
static inline V vpow(V x, V e) { return (x.log() * e).exp(); }
static const float EPSF = 1e-7f, TINY = 1.17549435e-38f;

torch::Tensor dombi_fwd(torch::Tensor a, torch::Tensor b, double p) {
  auto out = torch::empty_like(a);
  const float* pa = a.data_ptr<float>(); const float* pb = b.data_ptr<float>(); float* po = out.data_ptr<float>();
  int64_t n = a.numel();
  V one(1.f), tiny(TINY), vp((float)p), vip((float)(1.0/p)), zero(0.f);
  int64_t i = 0;
  for (; i + V::size() <= n; i += V::size()) {
    V x = V::loadu(pa + i), y = V::loadu(pb + i);
    V za = (one - x) / at::vec::maximum(x, tiny), zb = (one - y) / at::vec::maximum(y, tiny);
    V m = at::vec::maximum(za, zb), lo = at::vec::minimum(za, zb);
    V q = vpow(vpow((lo + tiny) / (m + tiny), vp) + one, vip);
    V t = one / (one + m * q);
    V mask = (x > zero) & (y > zero);  // all-ones bits where both positive
    t = V::blendv(zero, t, mask);
    t.store(po + i);
  }
  for (; i < n; ++i) {
    float x = pa[i], y = pb[i];
    float za = (1 - x) / std::max(x, TINY), zb = (1 - y) / std::max(y, TINY);
    float m = std::max(za, zb), lo = std::min(za, zb);
    float q = std::pow(std::pow((lo + TINY) / (m + TINY), (float)p) + 1.f, (float)(1.0 / p));
    float t = 1.f / (1.f + m * q);
    po[i] = (x > 0 && y > 0) ? t : 0.f;
  }
  return out;
}

std::vector<torch::Tensor> dombi_bwd(torch::Tensor g, torch::Tensor a, torch::Tensor b, double p) {
  auto da = torch::empty_like(a), db = torch::empty_like(b);
  const float* pg = g.data_ptr<float>(); const float* pa = a.data_ptr<float>(); const float* pb = b.data_ptr<float>();
  float* oa = da.data_ptr<float>(); float* ob = db.data_ptr<float>();
  int64_t n = a.numel();
  TORCH_CHECK(n % V::size() == 0, "the measurement's sizes are multiples of 8");
  V one(1.f), tiny(TINY), eps(EPSF), vp((float)p), vip((float)(1.0/p)), vpm1((float)(p - 1.0)), v1mp((float)(1.0 - p));
  int64_t i = 0;
  for (; i + V::size() <= n; i += V::size()) {
    V x = at::vec::maximum(V::loadu(pa + i), eps), y = at::vec::maximum(V::loadu(pb + i), eps);
    V za = (one - x) / x, zb = (one - y) / y;
    V m = at::vec::maximum(za, zb), lo = at::vec::minimum(za, zb);
    V q = vpow(vpow((lo + tiny) / (m + tiny), vp) + one, vip);
    V t = one / (one + m * q);
    V scale = vpow(q, v1mp) * t * t * V::loadu(pg + i);
    V mt = m + tiny;
    V du = vpow(at::vec::maximum((za + tiny) / mt, eps), vpm1) * scale;
    V dv = vpow(at::vec::maximum((zb + tiny) / mt, eps), vpm1) * scale;
    (du / (x * x)).store(oa + i);
    (dv / (y * y)).store(ob + i);
  }
  return {da, db};
}
"""
mod = load_inline(
    "dfl_bench_fused_dombi",
    cpp_sources=src,
    functions=["dombi_fwd", "dombi_bwd"],
    extra_cflags=["-O3", "-mavx2", "-mfma", "-DCPU_CAPABILITY_AVX2", "-DCPU_CAPABILITY=AVX2"],
    verbose=False,
)


class Fused(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, p):
        ctx.save_for_backward(a, b)
        ctx.p = p
        return mod.dombi_fwd(a, b, p)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        da, db = mod.dombi_bwd(g.contiguous(), a, b, ctx.p)
        return da, db, None


torch.set_num_threads(1)
torch.manual_seed(0)
shape = (64, 64, 10)
a0, b0 = torch.rand(shape), torch.rand(shape)
a0[0, 0, 0] = 0.0
p = 0.5


def bench(f, reps: int = 200) -> float:
    a = a0.clone().requires_grad_()
    b = b0.clone().requires_grad_()
    for _ in range(20):
        f(a, b).sum().backward()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f(a, b).sum().backward()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


print(
    f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
    "one thread, 64 x 64 x 10 float32, median ms of forward + backward"
)
for round_ in range(3):
    prod = bench(lambda a, b: a * b)
    eager = bench(lambda a, b: t_norm("dombi", a, b, p))
    fused = bench(lambda a, b: Fused.apply(a, b, p))
    print(
        f"round {round_}: product {prod:.3f}  dombi eager {eager:.3f} ({eager / prod:.1f}x)"
        f"  dombi fused {fused:.3f} ({fused / prod:.1f}x)"
    )
a = a0.clone().requires_grad_()
b = b0.clone().requires_grad_()
ve = t_norm("dombi", a, b, p)
ve.sum().backward()
ga, gb = a.grad.clone(), b.grad.clone()
a.grad = b.grad = None
vf = Fused.apply(a, b, p)
vf.sum().backward()
print(
    "fused against eager: value max rel diff",
    ((vf - ve).abs() / ve.abs().clamp_min(1e-30)).max().item(),
    "bitwise equal frac",
    (vf == ve).float().mean().item(),
)
print(
    "fused against eager: grad max rel diff",
    ((a.grad - ga).abs() / ga.abs().clamp_min(1e-30)).max().item(),
    (b.grad - gb).abs().max().item(),
)
