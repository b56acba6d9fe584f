// Host stand-in for the part of the CUDA runtime API the backend's host code calls (gpu/mock/README in
// docs/gpu.md "Mock build"): same names, types and error semantics, device memory is host memory filled
// with NaN bytes, the stream-ordered pool keeps and releases memory by the runtime's rules, streams and
// events complete at once. Only compiled into normsim_gpu_mock, never beside the real runtime.
#pragma once
#include <cstddef>
#include <cstdint>

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorNoKernelImageForDevice = 209,
};

// library_types.h's element types (the real runtime header includes it): cuSOLVER's and the bf16 GEMM's.
enum cudaDataType { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16BF = 14 };

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaMemPoolAttr {
  cudaMemPoolAttrReleaseThreshold = 4,
  cudaMemPoolAttrReservedMemCurrent = 5,
  cudaMemPoolAttrUsedMemCurrent = 7,
};

struct CUstream_st;
struct CUevent_st;
struct CUmemPoolHandle_st;
using cudaStream_t = CUstream_st*;
using cudaEvent_t = CUevent_st*;
using cudaMemPool_t = CUmemPoolHandle_st*;
#define cudaStreamLegacy ((cudaStream_t)0x1)

struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  int major;
  int minor;
  int multiProcessorCount;
};

const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
// How the host waits for the device (the runtime's values); the mock keeps the flags and waits for nothing.
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceFlags(unsigned int* flags);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaFree(void* p);
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes);
cudaError_t cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* p, cudaStream_t stream);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, std::size_t min_bytes_to_keep);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemset(void* dst, int value, std::size_t bytes);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMallocHost(void** p, std::size_t bytes);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
