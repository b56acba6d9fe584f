// Whether the CUDA backend can run on this machine, and if not the real cause: no driver or device, a
// compute capability none of the built architectures runs on, or a context that cannot be created.
// Plain C++ header.
#pragma once
#include <string>
#include <string_view>

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// Number of CUDA devices; 0 with the reason in *why when there is none or the driver is missing.
int cuda_device_count(std::string* why = nullptr);
std::string cuda_device_name();
// Device 0 for provenance: "NVIDIA H200 (compute capability 9.0, 132 SMs, 139.8 GiB; CUDA driver 13.0,
// runtime 13.0)".
std::string cuda_device_description();

// Whether code built for `archs` (CMAKE_CUDA_ARCHITECTURES, comma-separated: "80", "90-real",
// "90-virtual") runs on compute capability major.minor. SASS of sm_XY runs on X.Y' with Y' >= Y (same
// major); PTX of compute_XY is compiled by the driver for any X.Y and newer. A bare number is both.
bool built_for(int major, int minor, std::string_view archs);

// How the host thread waits for the device, as cudaSetDeviceFlags takes it, from NORMSIM_CUDA_SYNC's value:
// unset, "" or "auto" (the driver's choice: spin while there are fewer contexts than cores), "spin",
// "yield" or "blocking" (sleeps until the device signals). Throws std::invalid_argument for another value.
unsigned host_wait_flags(const char* value);

// Device 0 usable by this build: present, an architecture that runs on it, a context created. Otherwise
// false with the cause in *why.
bool cuda_device_usable(std::string* why);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
