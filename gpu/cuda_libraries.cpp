// cuBLAS and cuSOLVER opened when the CUDA backend first calls them, not when a program that links
// normsim_gpu starts (gpu/cuda_libraries.hpp says why). Each function the backend calls is defined here with
// the toolkit's signature (the headers declare it, so a wrong one does not compile) and forwards to the
// library's own, found by dlsym on first use. Only in the real build: the mock defines these itself.
#include "gpu/cuda_libraries.hpp"

#include <dlfcn.h>

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// The library at `path` (the one CMake found, NORMSIM_CUBLAS_LIBRARY and NORMSIM_CUSOLVER_LIBRARY), opened
// once; null with dlerror's reason in `why` when it cannot be.
void* open_library(const char* path, std::string& why) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) why = dlerror();
  return handle;
}

struct Library {
  const char* path;
  void* handle;
  std::string why;
  explicit Library(const char* p) : path(p), handle(open_library(p, why)) {}
};

Library& cublas_library() {
  static Library library(NORMSIM_CUBLAS_LIBRARY);
  return library;
}
Library& cusolver_library() {
  static Library library(NORMSIM_CUSOLVER_LIBRARY);
  return library;
}

// Symbol `name` of the library, or null with the reason in `why`.
void* find_symbol(Library& library, const char* name, std::string& why) {
  if (!library.handle) {
    why = std::string("cannot open ") + library.path + ": " + library.why;
    return nullptr;
  }
  void* f = dlsym(library.handle, name);
  if (!f) why = std::string("no ") + name + " in " + library.path;
  return f;
}

// The function `name` of the library as F; throws naming the library when it cannot be loaded.
template <class F>
F library_function(Library& library, const char* name) {
  std::string why;
  void* f = find_symbol(library, name, why);
  if (!f)
    throw std::runtime_error("the CUDA backend needs " + why +
                             " (docs/gpu.md, \"Loading cuBLAS and cuSOLVER\")");
  return reinterpret_cast<F>(f);
}

}  // namespace

// X(library, return type, name, (parameters), (arguments)): every cuBLAS and cuSOLVER function the backend
// calls (`nm -D --undefined-only` of a program linking normsim_gpu lists none of them).
#define NORMSIM_CUDA_LIBRARY_FUNCTIONS(X)                                                                  \
  X(cublas, const char*, cublasGetStatusString, (cublasStatus_t status), (status))                         \
  X(cublas, cublasStatus_t, cublasCreate_v2, (cublasHandle_t * handle), (handle))                          \
  X(cublas, cublasStatus_t, cublasSetMathMode, (cublasHandle_t handle, cublasMath_t mode), (handle, mode)) \
  X(cublas, cublasStatus_t, cublasSgemmStridedBatched,                                                     \
    (cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,               \
     const float* alpha, const float* A, int lda, long long int sa, const float* B, int ldb,               \
     long long int sb, const float* beta, float* C, int ldc, long long int sc, int batch),                 \
    (handle, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch))                     \
  X(cublas, cublasStatus_t, cublasDgemmStridedBatched,                                                     \
    (cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,               \
     const double* alpha, const double* A, int lda, long long int sa, const double* B, int ldb,            \
     long long int sb, const double* beta, double* C, int ldc, long long int sc, int batch),               \
    (handle, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch))                     \
  X(cublas, cublasStatus_t, cublasSgemmBatched,                                                            \
    (cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,               \
     const float* alpha, const float* const A[], int lda, const float* const B[], int ldb,                 \
     const float* beta, float* const C[], int ldc, int batch),                                             \
    (handle, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch))                                 \
  X(cublas, cublasStatus_t, cublasDgemmBatched,                                                            \
    (cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,               \
     const double* alpha, const double* const A[], int lda, const double* const B[], int ldb,              \
     const double* beta, double* const C[], int ldc, int batch),                                           \
    (handle, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch))                                 \
  X(cublas, cublasStatus_t, cublasGemmStridedBatchedEx,                                                    \
    (cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,               \
     const void* alpha, const void* A, cudaDataType at, int lda, long long int sa, const void* B,          \
     cudaDataType bt, int ldb, long long int sb, const void* beta, void* C, cudaDataType ct, int ldc,      \
     long long int sc, int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo),                     \
    (handle, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc, sc, batch, compute, \
     algo))                                                                                                \
  X(cusolver, cusolverStatus_t, cusolverDnCreate, (cusolverDnHandle_t * handle), (handle))                 \
  X(cusolver, cusolverStatus_t, cusolverDnCreateParams, (cusolverDnParams_t * params), (params))           \
  X(cusolver, cusolverStatus_t, cusolverDnDestroyParams, (cusolverDnParams_t params), (params))            \
  X(cusolver, cusolverStatus_t, cusolverDnXsyevBatched_bufferSize,                                         \
    (cusolverDnHandle_t handle, cusolverDnParams_t params, cusolverEigMode_t jobz, cublasFillMode_t uplo,  \
     int64_t n, cudaDataType at, const void* A, int64_t lda, cudaDataType wt, const void* W,               \
     cudaDataType compute, size_t* device_bytes, size_t* host_bytes, int64_t batch),                       \
    (handle, params, jobz, uplo, n, at, A, lda, wt, W, compute, device_bytes, host_bytes, batch))          \
  X(cusolver, cusolverStatus_t, cusolverDnXsyevBatched,                                                    \
    (cusolverDnHandle_t handle, cusolverDnParams_t params, cusolverEigMode_t jobz, cublasFillMode_t uplo,  \
     int64_t n, cudaDataType at, void* A, int64_t lda, cudaDataType wt, void* W, cudaDataType compute,     \
     void* device_buffer, size_t device_bytes, void* host_buffer, size_t host_bytes, int* info,            \
     int64_t batch),                                                                                       \
    (handle, params, jobz, uplo, n, at, A, lda, wt, W, compute, device_buffer, device_bytes, host_buffer,  \
     host_bytes, info, batch))

std::vector<std::string> unresolved_cuda_library_functions() {
  std::vector<std::string> out;
  std::string why;
#define NORMSIM_CHECK_FUNCTION(library, ret, name, params, args) \
  if (!find_symbol(library##_library(), #name, why)) out.push_back(why);
  NORMSIM_CUDA_LIBRARY_FUNCTIONS(NORMSIM_CHECK_FUNCTION)
#undef NORMSIM_CHECK_FUNCTION
  return out;
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu

#define NORMSIM_FORWARD_FUNCTION(library, ret, name, params, args)                               \
  extern "C" ret name params {                                                                   \
    static const auto f =                                                                        \
        normsim::gpu::library_function<ret(*) params>(normsim::gpu::library##_library(), #name); \
    return f args;                                                                               \
  }
NORMSIM_CUDA_LIBRARY_FUNCTIONS(NORMSIM_FORWARD_FUNCTION)
#undef NORMSIM_FORWARD_FUNCTION
