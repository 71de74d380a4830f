// tensor.cpp - host tensors, owning or borrowed.
#include "modelc/runtime.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace modelc {

std::string describe(DType dtype, const std::vector<int64_t> &shape) {
  std::string text(dtypeName(dtype));
  text += "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

static int64_t countElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw Error("invalid tensor shape " + describe(DType::F32, shape) +
                  ": negative dimension");
    if (d && n > std::numeric_limits<int64_t>::max() / d)
      throw Error("invalid tensor shape " + describe(DType::F32, shape) +
                  ": more elements than fit in 64 bits");
    n *= d;
  }
  return n;
}

int64_t Tensor::numel() const { return countElements(shape_); }

std::size_t Tensor::nbytes() const {
  return static_cast<std::size_t>(numel()) * dtypeSize(dtype_);
}

Tensor Tensor::zeros(std::vector<int64_t> shape, DType dtype) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  std::size_t bytes = t.nbytes();
  // 64-byte aligned, at least one cache line so that empty tensors have data.
  std::size_t rounded = ((bytes + 63) / 64) * 64;
  void *memory = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!memory)
    throw Error("out of host memory allocating " + t.describe());
  std::memset(memory, 0, rounded ? rounded : 64);
  t.storage_ = std::shared_ptr<void>(memory, std::free);
  t.data_ = memory;
  return t;
}

Tensor Tensor::from_host(void *data, std::vector<int64_t> shape, DType dtype) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  countElements(t.shape_);
  t.data_ = data;
  return t;
}

Tensor Tensor::from_host(const void *data, std::vector<int64_t> shape,
                         DType dtype) {
  Tensor t = from_host(const_cast<void *>(data), std::move(shape), dtype);
  t.read_only_ = true;
  return t;
}

Tensor Tensor::copy_of(const void *data, std::vector<int64_t> shape,
                       DType dtype) {
  Tensor t = zeros(std::move(shape), dtype);
  if (t.nbytes())
    std::memcpy(t.data_, data, t.nbytes());
  return t;
}

void *Tensor::mutable_data() {
  if (read_only_)
    throw Error("tensor " + describe() + " borrows read-only memory");
  return data_;
}

} // namespace modelc
