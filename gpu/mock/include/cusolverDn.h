// Host stand-in for the cuSOLVER calls the backend makes (the batched symmetric eigensolver behind
// eff_rank): same names and types, eigenvalues by Eigen's SelfAdjointEigenSolver in double on host memory.
// Only compiled into normsim_gpu_mock.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cublas_v2.h"
#include "cuda_runtime_api.h"

enum cusolverStatus_t {
  CUSOLVER_STATUS_SUCCESS = 0,
  CUSOLVER_STATUS_NOT_INITIALIZED = 1,
  CUSOLVER_STATUS_INVALID_VALUE = 3,
  CUSOLVER_STATUS_NOT_SUPPORTED = 9,
};
enum cusolverEigMode_t { CUSOLVER_EIG_MODE_NOVECTOR = 0, CUSOLVER_EIG_MODE_VECTOR = 1 };

struct cusolverDnContext;
struct cusolverDnParams;
using cusolverDnHandle_t = cusolverDnContext*;
using cusolverDnParams_t = cusolverDnParams*;

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle);
cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle);
cusolverStatus_t cusolverDnCreateParams(cusolverDnParams_t* params);
cusolverStatus_t cusolverDnDestroyParams(cusolverDnParams_t params);
cusolverStatus_t cusolverDnXsyevBatched_bufferSize(cusolverDnHandle_t handle, cusolverDnParams_t params,
                                                   cusolverEigMode_t jobz, cublasFillMode_t uplo, int64_t n,
                                                   cudaDataType dataTypeA, const void* A, int64_t lda,
                                                   cudaDataType dataTypeW, const void* W,
                                                   cudaDataType computeType, std::size_t* device_bytes,
                                                   std::size_t* host_bytes, int64_t batchSize);
cusolverStatus_t cusolverDnXsyevBatched(cusolverDnHandle_t handle, cusolverDnParams_t params,
                                        cusolverEigMode_t jobz, cublasFillMode_t uplo, int64_t n,
                                        cudaDataType dataTypeA, void* A, int64_t lda, cudaDataType dataTypeW,
                                        void* W, cudaDataType computeType, void* device_buffer,
                                        std::size_t device_bytes, void* host_buffer, std::size_t host_bytes,
                                        int* info, int64_t batchSize);
