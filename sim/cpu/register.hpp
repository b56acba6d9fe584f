// Public entry of the CPU engine: makes sim::make_backend(BackendChoice::cpu, or auto_ falling back to the
// CPU) able to build the CPU backend. Call once at startup (the CLI and the Python module do), as
// gpu::register_backend() for the CUDA backend.
#pragma once

namespace normsim::sim::cpu {

void register_backend();

}  // namespace normsim::sim::cpu
