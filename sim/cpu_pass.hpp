// Forwards to sim/cpu/cpu_pass.hpp for sim/train_loop.cpp, the CPU engine's training loop, which stays in
// sim/ until the weight update is written once and includes this path (docs/architecture.md, section 2).
#pragma once
#include "sim/cpu/cpu_pass.hpp"
