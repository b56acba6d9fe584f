// The MLP branch, written once for every device (issue 31 item 1): which products it runs, in which order,
// which weight gradients it records, and where precision = "bf16" rounds (sim/bf16.hpp). A device runs it
// on one sample (sim/cpu/cpu_mlp_device.hpp) or on a batch of samples (gpu/gpu_mlp_device.hpp).
//   h = u W1 (T x H), a = act(h), F = a W2            (SwiGLU: g = u Wgate, a = silu(g) * h)
// A routed MLP's experts are this branch with the device drawing WeightId{kind, e} (sim/cpu/cpu_moe.cpp,
// gpu/gpu_moe.cpp).
//
// A Device supplies, for the weights of one sublayer (drawn or kept as it does, W + dW where its update
// hooks apply one), each product's bias and bf16 rounding included:
//   Buffer, In         an owned activation matrix (T x n per sample) and the read-only view branches take;
//   Hidden             what the forward keeps for the backward: members h and g (Buffers), and whatever the
//                      device's activation epilogue keeps besides;
//   NormsOut           where the weight-gradient norms go;
//   swiglu(), view(b)  the shape's SwiGLU flag; an In of a Buffer;
//   project(x, w, out)                  out = x W (+ b), rounded in bf16;
//   project_activated(u, w, hid, a)     hid.h = u W (+ b) as project, and the epilogue a = act(hid.h) or
//                                       silu(hid.g) * hid.h, rounded in bf16 after each op;
//   activations(hid)                    that a again, the same bits;
//   back_project_activated(dy, w, hid, dh, dg)   da = [dy W^T] (rounded), then the activation's backward:
//                                       dh = da act'(h); SwiGLU dg = [[da h] silu'(g)], dh = da silu(g),
//                                       each bracket a bf16 rounding, dh rounded;
//   back_project(dy, w, dx, accumulate) dx = [dy W^T], or dx += [dy W^T] (fused into the product outside
//                                       bf16, where [.] is no rounding);
//   weight_gradients({{w, A, B}, ...}, norms)   ||A^T B||_F of each into norms (in any order, concurrently if
//                                       it likes), and A^T B (and its bias's 1^T B) to an update recording;
//   operand(x, copy)                    x as the bf16 products read it (itself outside bf16);
//   release(hid)                        after the backward.
#pragma once
#include "sim/stack.hpp"

namespace normsim::sim {

// One weight gradient a device forms: dLoss/dW = A^T B of matrix w (A its input, B its output's gradient).
template <class In>
struct WeightGradient {
  WeightKind w;
  In a, b;
};

template <class Device>
class MlpBranch {
 public:
  using Buffer = typename Device::Buffer;
  using In = typename Device::In;

  Buffer forward(Device& dev, In u) {
    if (dev.swiglu()) dev.project(u, WeightKind::wgate, hidden_.g);
    Buffer a, out;
    dev.project_activated(u, WeightKind::w1, hidden_, a);
    dev.project(dev.view(a), WeightKind::w2, out);
    return out;
  }

  // dLoss/du for the u forward() was given. In bf16 u and dout are read rounded, as the forward's products
  // and the bf16 output's gradient are; du sums its two products' rounded gradients in float32 (each linear
  // casts u on its own, and the casts' backward accumulates in u's float32).
  Buffer backward(Device& dev, In u_in, In dout_in, typename Device::NormsOut norms) {
    Buffer u_rounded, dout_rounded, dh, dg, du;
    const In u = dev.operand(u_in, u_rounded);
    const In dout = dev.operand(dout_in, dout_rounded);
    dev.back_project_activated(dout, WeightKind::w2, hidden_, dh, dg);
    {  // a is recomputed from h (and g) rather than kept, and freed before du's products
      const Buffer a = dev.activations(hidden_);
      if (dev.swiglu())
        dev.weight_gradients({{WeightKind::w2, dev.view(a), dout},
                              {WeightKind::wgate, u, dev.view(dg)},
                              {WeightKind::w1, u, dev.view(dh)}},
                             norms);
      else
        dev.weight_gradients({{WeightKind::w2, dev.view(a), dout}, {WeightKind::w1, u, dev.view(dh)}}, norms);
    }
    if (dev.swiglu()) {
      dev.back_project(dev.view(dg), WeightKind::wgate, du, false);
      dev.back_project(dev.view(dh), WeightKind::w1, du, true);
    } else {
      dev.back_project(dev.view(dh), WeightKind::w1, du, false);
    }
    dev.release(hidden_);
    return du;
  }

 private:
  typename Device::Hidden hidden_;
};

}  // namespace normsim::sim
