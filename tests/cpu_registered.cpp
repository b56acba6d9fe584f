// Registers the CPU engine before any test runs (sim::cpu::register_backend(), as app/normsim.cpp's main and
// the Python module do), so that sim::make_backend builds the CPU backend in a test program. normsim_add_test
// compiles this file into every test that links normsim_cpu.
#include "sim/cpu/register.hpp"

namespace {
const bool cpu_registered = (normsim::sim::cpu::register_backend(), true);
}  // namespace
