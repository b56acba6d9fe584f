#include "sim/cpu/update_pass.hpp"

#include <algorithm>

#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/edges.hpp"
#include "sim/inputs.hpp"
#include "sim/stack_build.hpp"

namespace normsim::sim {

template <class R>
Mat<R> input_matrix(const Config& config, SampleKey key, std::uint32_t batch) {
  if (has_embedding(config)) return embedding_input<R>(config, key.sample, batch);
  const int T = config.tokens, d = config.width;
  Mat<R> x0(T, d);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i)
      x0(t, i) = R(input_entry(config.seed, key.sample, t, i, d, config.input_std, config.input_corr, batch));
  return x0;
}

template <class R>
std::vector<MatD> updated_stream_cpu(const StackShape& shape, const Placement& placement, SampleKey key,
                                     const ParameterUpdate<R>& update, PlacementState state,
                                     CpuWorkspace<R>& ws, MatD* loss_input) {
  CpuTape<R> graph(shape, placement, key, &ws, UpdateHooks<R>{nullptr, &update});
  state.replay = true;
  const StackValues sv =
      build_stack(graph, shape, placement, graph.input(input_matrix<R>(shape.cfg, key)), &state);
  std::vector<MatD> out;
  for (const Value v : sv.stream) out.push_back(graph.value(v).template cast<double>());
  if (loss_input) *loss_input = graph.value(sv.loss_input()).template cast<double>();
  return out;
}

std::vector<double> relative_change(const std::vector<MatD>& updated, const std::vector<MatD>& stream) {
  std::vector<double> change(std::min(updated.size(), stream.size()));
  for (std::size_t l = 0; l < change.size(); ++l)
    change[l] = (updated[l] - stream[l]).squaredNorm() / stream[l].squaredNorm();
  return change;
}

template Mat<float> input_matrix<float>(const Config&, SampleKey, std::uint32_t);
template Mat<double> input_matrix<double>(const Config&, SampleKey, std::uint32_t);
template std::vector<MatD> updated_stream_cpu<float>(const StackShape&, const Placement&, SampleKey,
                                                     const ParameterUpdate<float>&, PlacementState,
                                                     CpuWorkspace<float>&, MatD*);
template std::vector<MatD> updated_stream_cpu<double>(const StackShape&, const Placement&, SampleKey,
                                                      const ParameterUpdate<double>&, PlacementState,
                                                      CpuWorkspace<double>&, MatD*);

}  // namespace normsim::sim
