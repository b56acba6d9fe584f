// Public entry of the CUDA backend: makes sim::make_backend(BackendChoice::cuda or auto_) able to build it.
// Call once at startup (the CLI does) in a build with NORMSIM_HAVE_CUDA.
#pragma once

namespace normsim::gpu {

void register_backend();

}  // namespace normsim::gpu
