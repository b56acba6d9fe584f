// The weight-matrix kinds, one row each: the one table of what each kind is (plain text for the X macro; no
// includes, so every layer can expand it). sim/stack.hpp expands it into `sim::WeightKind` (each kind's value
// is its Philox stream, sim/philox.hpp `Stream`, so a kind's position here must be its stream id: stack.hpp
// checks) and `weight_name`; sim/init.cpp reads its init override and whether it writes the stream and has a
// bias; sim/sample_metrics.cpp its metrics (gradw_<kind> for every kind, and the coordinate check's dwx and
// rel_dw where it has them); vocab/param_rules.cpp its name as a parametrization rule's selector. A new kind
// is a row here, its stream id in sim/philox.hpp, its metric rows in vocab/metrics.def and the branch that
// uses it.
//
// X(kind, init_key, writes_stream, biased, dwx, rel_dw):
//   kind           its name: gradw_<kind>'s suffix, `weight_name`, and its Philox stream `Stream::kind`;
//   init_key       the Config member whose text overrides its init rule (docs/conventions.md; "" keeps the
//                  init key's rule): the decoder's cross-attention shares the self-attention's overrides,
//                  and the output gate W_g falls back to W_Q's when init_wga is empty (sim/init.cpp);
//   writes_stream  whether its output is the branch's (fan_out = d): W_2, W_O and the decoder's C_O, the
//                  matrices a placement's output-scaling rules act on;
//   biased         whether `bias = true` gives it a bias (a routed MLP's router has none);
//   dwx, rel_dw    its update's coordinate-check metrics (sim/update_probe.hpp), `none` where it has
//                  none (a parameter update of a routed MLP is refused).
#pragma once

#define NORMSIM_WEIGHT_KINDS(X)                              \
  X(w1, init_w1, false, true, dwx_w1, rel_dw_w1)             \
  X(w2, init_w2, true, true, dwx_w2, rel_dw_w2)              \
  X(wgate, init_wgate, false, true, dwx_wgate, rel_dw_wgate) \
  X(wq, init_wq, false, true, dwx_wq, rel_dw_wq)             \
  X(wk, init_wk, false, true, dwx_wk, rel_dw_wk)             \
  X(wv, init_wv, false, true, dwx_wv, rel_dw_wv)             \
  X(wo, init_wo, true, true, dwx_wo, rel_dw_wo)              \
  X(cq, init_wq, false, true, dwx_cq, rel_dw_cq)             \
  X(ck, init_wk, false, true, dwx_ck, rel_dw_ck)             \
  X(cv, init_wv, false, true, dwx_cv, rel_dw_cv)             \
  X(co, init_wo, true, true, dwx_co, rel_dw_co)              \
  X(wga, init_wga, false, true, dwx_wga, rel_dw_wga)         \
  X(wrouter, init_wrouter, false, false, none, none)
