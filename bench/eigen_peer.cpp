#include "eigen_peer.hpp"

#define EIGEN_USE_THREADS
#include <Eigen/Core>
#include <unsupported/Eigen/CXX11/Tensor>

#include <cstdint>
#include <stdexcept>

namespace sqdiff_bench::eigen_peer {
namespace {

// Eigen's own pool, created once and kept alive (its threads sleep when idle).
Eigen::ThreadPoolDevice& pool_device() {
  static Eigen::ThreadPool pool(2);
  static Eigen::ThreadPoolDevice device(&pool, 2);
  return device;
}

template <class T>
void same_shape_typed(Op op, const void* a_raw, const void* b_raw, void* out_raw, std::ptrdiff_t n, int threads) {
  const T* a_data = static_cast<const T*>(a_raw);
  const T* b_data = static_cast<const T*>(b_raw);
  T* out_data = static_cast<T*>(out_raw);
  if (threads <= 1) {
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    Eigen::Map<const Array> a(a_data, n);
    Eigen::Map<const Array> b(b_data, n);
    Eigen::Map<Array> out(out_data, n);
    if (op == Op::subtract) {
      out = a - b;
    } else {
      out = (a - b).square();
    }
    return;
  }
  Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor>> a(a_data, n);
  Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor>> b(b_data, n);
  Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor>> out(out_data, n);
  if (op == Op::subtract) {
    out.device(pool_device()) = a - b;
  } else {
    out.device(pool_device()) = (a - b).square();
  }
}

using In4 = Eigen::TensorMap<Eigen::Tensor<const float, 4, Eigen::RowMajor>>;
using Out4 = Eigen::TensorMap<Eigen::Tensor<float, 4, Eigen::RowMajor>>;
using In1 = Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor>>;
using Out1 = Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>>;

// Assigns expr to out on the device for the thread count.
template <class Out, class Expr>
void assign(Out& out, const Expr& expr, int threads) {
  if (threads <= 1) {
    out.device(Eigen::DefaultDevice{}) = expr;
  } else {
    out.device(pool_device()) = expr;
  }
}

}  // namespace

void same_shape(Op op, sqdiff::DType dtype, const void* a, const void* b, void* out, std::ptrdiff_t n,
                int threads) {
  switch (dtype) {
    case sqdiff::DType::f32: same_shape_typed<float>(op, a, b, out, n, threads); return;
    case sqdiff::DType::f16: same_shape_typed<Eigen::half>(op, a, b, out, n, threads); return;
    case sqdiff::DType::bf16: same_shape_typed<Eigen::bfloat16>(op, a, b, out, n, threads); return;
    case sqdiff::DType::i32: same_shape_typed<int32_t>(op, a, b, out, n, threads); return;
    default: throw std::invalid_argument("eigen_peer::same_shape: unsupported dtype");
  }
}

std::string same_shape_note(int threads) { return threads <= 1 ? "Map" : "Tensor+ThreadPool2"; }

std::string tensor_note(int threads) { return threads <= 1 ? "Tensor" : "Tensor+ThreadPool2"; }

void broadcast(const float* a_data, const Dims& a_dims, const float* b_data, const Dims& b_dims, float* out_data,
               const Dims& out_dims, int threads) {
  In4 a(a_data, a_dims);
  In4 b(b_data, b_dims);
  Out4 out(out_data, out_dims);
  Eigen::array<Eigen::Index, 4> a_factor;
  Eigen::array<Eigen::Index, 4> b_factor;
  for (std::size_t i = 0; i < 4; ++i) {
    a_factor[i] = out_dims[i] / a_dims[i];
    b_factor[i] = out_dims[i] / b_dims[i];
  }
  // Broadcast only the operands that need it, as an Eigen user would.
  const bool a_full = a_dims == out_dims;
  const bool b_full = b_dims == out_dims;
  if (a_full && b_full) {
    assign(out, (a - b).square(), threads);
  } else if (a_full) {
    assign(out, (a - b.broadcast(b_factor)).square(), threads);
  } else if (b_full) {
    assign(out, (a.broadcast(a_factor) - b).square(), threads);
  } else {
    assign(out, (a.broadcast(a_factor) - b.broadcast(b_factor)).square(), threads);
  }
}

void reversed(const float* a_data, const float* b_data, float* out_data, std::ptrdiff_t n, int threads) {
  In1 a(a_data, n);
  In1 b(b_data, n);
  Out1 out(out_data, n);
  const Eigen::array<bool, 1> reverse{true};
  assign(out, (a.reverse(reverse) - b).square(), threads);
}

void strided(const float* a_data, std::ptrdiff_t stride, const float* b_data, float* out_data, std::ptrdiff_t n,
             int threads) {
  In1 a(a_data, (n - 1) * stride + 1);
  In1 b(b_data, n);
  Out1 out(out_data, n);
  const Eigen::array<Eigen::Index, 1> strides{stride};
  assign(out, (a.stride(strides) - b).square(), threads);
}

float squared_norm(const float* a_data, const float* b_data, std::ptrdiff_t n, int threads) {
  if (threads <= 1) {
    Eigen::Map<const Eigen::VectorXf> a(a_data, n);
    Eigen::Map<const Eigen::VectorXf> b(b_data, n);
    return (a - b).squaredNorm();
  }
  In1 a(a_data, n);
  In1 b(b_data, n);
  Eigen::Tensor<float, 0, Eigen::RowMajor> sum;
  sum.device(pool_device()) = (a - b).square().sum();
  return sum();
}

double squared_norm_in_double(const float* a_data, const float* b_data, std::ptrdiff_t n, int threads) {
  if (threads <= 1) {
    Eigen::Map<const Eigen::VectorXf> a(a_data, n);
    Eigen::Map<const Eigen::VectorXf> b(b_data, n);
    return (a.cast<double>() - b.cast<double>()).squaredNorm();
  }
  In1 a(a_data, n);
  In1 b(b_data, n);
  Eigen::Tensor<double, 0, Eigen::RowMajor> sum;
  sum.device(pool_device()) = (a.cast<double>() - b.cast<double>()).square().sum();
  return sum();
}

std::string squared_norm_note(int threads) { return threads <= 1 ? "squaredNorm" : "Tensor.sum+ThreadPool2"; }

std::string version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

}  // namespace sqdiff_bench::eigen_peer
