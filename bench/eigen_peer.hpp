// Eigen 3.4 (Debian's libeigen3-dev, header-only) as the in-run peer.
//
// Same shape, 1 thread: coefficient-wise expressions on Eigen::Map'd arrays,
// the way an Eigen user writes it. 2 threads, and every broadcast: the
// unsupported Tensor module (TensorMap, .broadcast(), .reverse(), .stride()),
// on a ThreadPoolDevice with 2 threads or the DefaultDevice for 1.
// f16 and bf16 use Eigen::half and Eigen::bfloat16; note that Eigen rounds
// a - b to the half type before squaring, so it does slightly less careful
// arithmetic than sqdiff (which squares in f32 and rounds once).
#pragma once

#include <sqdiff/dtype.hpp>

#include <array>
#include <cstddef>
#include <string>

namespace sqdiff_bench::eigen_peer {

enum class Op { subtract, squared_difference };

// out = a - b or (a - b)^2 over n elements of one dtype (f32, f16, bf16, i32);
// out may be a (in place).
void same_shape(Op op, sqdiff::DType dtype, const void* a, const void* b, void* out, std::ptrdiff_t n,
                int threads);
std::string same_shape_note(int threads);  // "Map" or "Tensor+ThreadPool2"

using Dims = std::array<std::ptrdiff_t, 4>;

// out = (a - b)^2, f32, rank 4, row-major dense; a and b broadcast (size-1
// dims expanded) to out_dims with Tensor::broadcast.
void broadcast(const float* a, const Dims& a_dims, const float* b, const Dims& b_dims, float* out,
               const Dims& out_dims, int threads);

// out[i] = (a[n - 1 - i] - b[i])^2: a reversed view.
void reversed(const float* a, const float* b, float* out, std::ptrdiff_t n, int threads);

// out[i] = (a[stride * i] - b[i])^2: a strided view.
void strided(const float* a, std::ptrdiff_t stride, const float* b, float* out, std::ptrdiff_t n,
             int threads);

std::string tensor_note(int threads);  // "Tensor" or "Tensor+ThreadPool2"

// sum of (a - b)^2 over n f32 elements, summed in f32 as Eigen does: 1 thread
// `(a - b).squaredNorm()` on Map'd vectors, 2 threads the Tensor module's
// `(a - b).square().sum()` on the pool.
float squared_norm(const float* a, const float* b, std::ptrdiff_t n, int threads);
// The same in double: each f32 widened, then subtracted, squared and summed
// in f64, the arithmetic sqdiff's fast path does (though not its rounding).
double squared_norm_in_double(const float* a, const float* b, std::ptrdiff_t n, int threads);
std::string squared_norm_note(int threads);  // "squaredNorm" or "Tensor.sum+ThreadPool2"

std::string version();

}  // namespace sqdiff_bench::eigen_peer
