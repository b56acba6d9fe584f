// Forwards to sim/cpu/cpu_tape_device.hpp for sim/update_pass.cpp, the CPU engine's updated pass, which
// stays in sim/ until the weight update is written once and includes this path (docs/architecture.md,
// section 2).
#pragma once
#include "sim/cpu/cpu_tape_device.hpp"
