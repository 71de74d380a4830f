// tensors.cpp - numpy arrays and DLPack tensors to and from modelc::Tensor.
#include "tensors.hpp"

#include "dlpack.h"

#include <pybind11/numpy.h>

#include <atomic>
#include <cstring>
#include <optional>

namespace py = pybind11;

namespace modelc::python {
namespace {

constexpr const char *kCapsuleName = "dltensor";
constexpr const char *kUsedCapsuleName = "used_dltensor";

/// Where an input came from, for the conversion its errors suggest.
enum class Source { Numpy, Dlpack };

/// describe()'s "[4,16]" after another spelling of the dtype ("complex64").
std::string describeAs(const std::string &dtype,
                       const std::vector<int64_t> &shape) {
  std::string text = describe(DType::F32, shape);
  return dtype + text.substr(text.find('['));
}

/// A dtype the runtime has no tensors of: both sides in numpy's and
/// PyTorch's spelling (the runtime has none for the given one).
[[noreturn]] void throwUnknownDtype(const TensorInfo &spec,
                                    const std::string &given,
                                    const std::vector<int64_t> &shape,
                                    Source source) {
  std::string want = numpyName(spec.dtype);
  std::string hint;
  if (source == Source::Dlpack)
    hint = "convert it, e.g. with .to(torch." + want + ")";
  else if (spec.dtype == DType::BF16)
    hint = "numpy has no bfloat16: give a torch.Tensor, e.g. "
           "torch.from_numpy(a).to(torch.bfloat16)";
  else
    hint = "convert it, e.g. with .astype('" + want + "')";
  throw Error("input '" + spec.name + "': expected " +
              describeAs(want, spec.shape) + ", got " +
              describeAs(given, shape) +
              " (modelc takes float32, float16, bfloat16, float64, bool and "
              "8- to 64-bit integer tensors; " +
              hint + ")");
}

/// Model::run's own check of an input's dtype and shape, and its message,
/// made before an input is copied: a wrong one is not copied for nothing.
void checkInput(const TensorInfo &spec, DType dtype,
                const std::vector<int64_t> &shape) {
  // An input with a dynamic axis: Model::run checks it and names the
  // dimension and its range.
  if (!spec.dims.empty())
    return;
  if (dtype != spec.dtype || shape != spec.shape)
    throw Error("input '" + spec.name + "': expected " +
                describe(spec.dtype, spec.shape) + ", got " +
                describe(dtype, shape));
}

std::optional<DType> numpyDType(const py::dtype &dtype) {
  if (!dtype.attr("isnative").cast<bool>())
    return std::nullopt;
  std::size_t size = dtype.itemsize();
  switch (dtype.kind()) {
  case 'f':
    if (size == 4)
      return DType::F32;
    if (size == 2)
      return DType::F16;
    if (size == 8)
      return DType::F64;
    return std::nullopt;
  case 'i':
    if (size == 1)
      return DType::I8;
    if (size == 2)
      return DType::I16;
    if (size == 4)
      return DType::I32;
    if (size == 8)
      return DType::I64;
    return std::nullopt;
  case 'u':
    if (size == 1)
      return DType::U8;
    if (size == 2)
      return DType::U16;
    if (size == 4)
      return DType::U32;
    if (size == 8)
      return DType::U64;
    return std::nullopt;
  case 'b':
    return DType::Bool;
  default:
    return std::nullopt;
  }
}

Input borrowNumpy(py::array array, const TensorInfo &spec) {
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  std::optional<DType> dtype = numpyDType(array.dtype());
  // numpy has no bfloat16: no array fits a bf16 input (say how to give one).
  if (!dtype || spec.dtype == DType::BF16)
    throwUnknownDtype(spec, py::str(array.dtype()).cast<std::string>(), shape,
                      Source::Numpy);
  checkInput(spec, *dtype, shape);
  Input input;
  bool contiguous = array.flags() & py::array::c_style;
  bool aligned = array.attr("flags").attr("aligned").cast<bool>();
  if (!contiguous || !aligned) {
    array = array.attr("copy")("C");
    input.copied = true;
  }
  input.tensor = Tensor::from_host(static_cast<const void *>(array.data()),
                                   std::move(shape), *dtype);
  input.owner = std::move(array);
  return input;
}

std::optional<DType> dlpackDType(DLDataType type) {
  if (type.lanes != 1)
    return std::nullopt;
  switch (type.code) {
  case kDLFloat:
    if (type.bits == 32)
      return DType::F32;
    if (type.bits == 16)
      return DType::F16;
    if (type.bits == 64)
      return DType::F64;
    return std::nullopt;
  case kDLBfloat:
    return type.bits == 16 ? std::optional<DType>(DType::BF16) : std::nullopt;
  case kDLInt:
    if (type.bits == 8)
      return DType::I8;
    if (type.bits == 16)
      return DType::I16;
    if (type.bits == 32)
      return DType::I32;
    if (type.bits == 64)
      return DType::I64;
    return std::nullopt;
  case kDLUInt:
    if (type.bits == 8)
      return DType::U8;
    if (type.bits == 16)
      return DType::U16;
    if (type.bits == 32)
      return DType::U32;
    if (type.bits == 64)
      return DType::U64;
    return std::nullopt;
  case kDLBool:
    return type.bits == 8 ? std::optional<DType>(DType::Bool) : std::nullopt;
  default:
    return std::nullopt;
  }
}

std::string dlpackTypeName(DLDataType type) {
  const char *names[] = {"int",    "uint",    "float", "opaque",
                         "bfloat", "complex", "bool"};
  std::string name = type.code < 7 ? names[type.code]
                                   : "code" + std::to_string(type.code) + "_";
  name += std::to_string(type.bits);
  if (type.lanes != 1)
    name += "x" + std::to_string(type.lanes);
  return name;
}

std::string dlpackDeviceName(DLDevice device) {
  switch (device.device_type) {
  case kDLCUDA:
    return "cuda:" + std::to_string(device.device_id);
  case kDLCUDAHost:
    return "cuda_host";
  case kDLCUDAManaged:
    return "cuda_managed:" + std::to_string(device.device_id);
  case kDLROCM:
    return "rocm:" + std::to_string(device.device_id);
  default:
    return "DLPack device type " + std::to_string(device.device_type) + ":" +
           std::to_string(device.device_id);
  }
}

/// Copies a strided tensor (strides in elements) into row-major `out`, from
/// dimension `dim` on; dimensions `inner` on are row-major already, and are
/// copied as one run of `runBytes` (a memcpy per run, not per element).
void copyStrided(char *&out, const char *in, const DLTensor &tensor, int dim,
                 int inner, std::size_t runBytes, std::size_t elementSize) {
  if (dim == inner) {
    std::memcpy(out, in, runBytes);
    out += runBytes;
    return;
  }
  for (int64_t i = 0; i < tensor.shape[dim]; ++i)
    copyStrided(
        out, in + i * tensor.strides[dim] * static_cast<int64_t>(elementSize),
        tensor, dim + 1, inner, runBytes, elementSize);
}

Input borrowDlpack(const py::handle &value, const TensorInfo &spec) {
  py::object capsule;
  try {
    capsule = value.attr("__dlpack__")();
  } catch (py::error_already_set &e) {
    throw Error("input '" + spec.name + "': its __dlpack__() failed: " +
                std::string(py::str(e.value())));
  }
  auto *managed = static_cast<DLManagedTensor *>(
      PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  if (!managed) {
    PyErr_Clear();
    throw py::type_error("input '" + spec.name +
                         "': __dlpack__() did not return a DLPack capsule "
                         "named 'dltensor'");
  }
  const DLTensor &tensor = managed->dl_tensor;
  std::vector<int64_t> shape(tensor.shape, tensor.shape + tensor.ndim);
  // Pinned host memory (CUDA's or ROCm's) is ordinary host memory to the
  // CPU: read where it is, like kDLCPU's.
  DLDeviceType device = tensor.device.device_type;
  if (device != kDLCPU && device != kDLCUDAHost && device != kDLROCMHost)
    throw Error("input '" + spec.name +
                "': expected a tensor on cpu, got one on " +
                dlpackDeviceName(tensor.device));
  std::optional<DType> dtype = dlpackDType(tensor.dtype);
  if (!dtype)
    throwUnknownDtype(spec, dlpackTypeName(tensor.dtype), shape,
                      Source::Dlpack);
  checkInput(spec, *dtype, shape);

  const char *data =
      static_cast<const char *>(tensor.data) + tensor.byte_offset;
  std::size_t elementSize = dtypeSize(*dtype);
  // Dimensions `inner` on are row-major (a size-1 one may have any stride):
  // a run of `run` elements. All of them (inner 0, or no strides): compact.
  int inner = 0;
  int64_t run = 1;
  if (tensor.strides) {
    inner = tensor.ndim;
    while (inner > 0 &&
           (tensor.shape[inner - 1] == 1 || tensor.strides[inner - 1] == run)) {
      --inner;
      run *= tensor.shape[inner];
    }
  }
  bool compact = inner == 0;
  bool aligned = reinterpret_cast<uintptr_t>(data) % elementSize == 0;
  Input input;
  if (compact && aligned) {
    input.tensor = Tensor::from_host(static_cast<const void *>(data),
                                     std::move(shape), *dtype);
    // The capsule stays unconsumed: when it dies, the producer's capsule
    // destructor calls the deleter. Until then the memory is borrowed.
    input.owner = std::move(capsule);
    return input;
  }
  Tensor copy = Tensor::zeros(std::move(shape), *dtype);
  if (copy.numel()) {
    char *out = static_cast<char *>(copy.mutable_data());
    if (compact)
      std::memcpy(out, data, copy.nbytes());
    else
      copyStrided(out, data, tensor, 0, inner,
                  static_cast<std::size_t>(run) * elementSize, elementSize);
  }
  input.tensor = std::move(copy);
  input.copied = true;
  return input;
}

std::atomic<int64_t> exportedAlive{0};

struct ExportedTensor {
  Tensor tensor;
  std::vector<int64_t> strides;
  DLManagedTensor managed;
};

void deleteExported(DLManagedTensor *self) {
  delete static_cast<ExportedTensor *>(self->manager_ctx);
  --exportedAlive;
}

/// A capsule nobody consumed owns its tensor: free it (DLPack's rule).
void destroyCapsule(PyObject *capsule) {
  if (PyCapsule_IsValid(capsule, kUsedCapsuleName))
    return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto *managed = static_cast<DLManagedTensor *>(
      PyCapsule_GetPointer(capsule, kCapsuleName));
  if (managed)
    managed->deleter(managed);
  else
    PyErr_WriteUnraisable(capsule);
  PyErr_Restore(type, value, traceback);
}

DLDataType dlpackType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return {kDLFloat, 32, 1};
  case DType::F16:
    return {kDLFloat, 16, 1};
  case DType::BF16:
    return {kDLBfloat, 16, 1};
  case DType::I32:
    return {kDLInt, 32, 1};
  case DType::I64:
    return {kDLInt, 64, 1};
  case DType::Bool:
    return {kDLBool, 8, 1};
  case DType::I8:
    return {kDLInt, 8, 1};
  case DType::I16:
    return {kDLInt, 16, 1};
  case DType::U8:
    return {kDLUInt, 8, 1};
  case DType::U16:
    return {kDLUInt, 16, 1};
  case DType::U32:
    return {kDLUInt, 32, 1};
  case DType::U64:
    return {kDLUInt, 64, 1};
  case DType::F64:
    return {kDLFloat, 64, 1};
  }
  throw Error("unknown dtype");
}

} // namespace

const char *numpyName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float32";
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "bfloat16";
  case DType::I32:
    return "int32";
  case DType::I64:
    return "int64";
  case DType::Bool:
    return "bool";
  case DType::I8:
    return "int8";
  case DType::I16:
    return "int16";
  case DType::U8:
    return "uint8";
  case DType::U16:
    return "uint16";
  case DType::U32:
    return "uint32";
  case DType::U64:
    return "uint64";
  case DType::F64:
    return "float64";
  }
  return "unknown";
}

Input borrowInput(const py::handle &value, const TensorInfo &spec) {
  if (py::isinstance<py::array>(value))
    return borrowNumpy(py::reinterpret_borrow<py::array>(value), spec);
  if (py::hasattr(value, "__dlpack__"))
    return borrowDlpack(value, spec);
  throw py::type_error(
      "input '" + spec.name +
      "': expected a numpy array or a tensor with "
      "__dlpack__ (such as a torch.Tensor), got " +
      py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>());
}

py::object toNumpy(Tensor tensor) {
  auto *owned = new Tensor(std::move(tensor));
  py::capsule base(owned,
                   [](void *tensor) { delete static_cast<Tensor *>(tensor); });
  std::vector<py::ssize_t> shape(owned->shape().begin(), owned->shape().end());
  return py::array(py::dtype(numpyName(owned->dtype())), std::move(shape),
                   std::vector<py::ssize_t>(), owned->mutable_data(), base);
}

py::object toDlpack(Tensor tensor) {
  auto *exported = new ExportedTensor{std::move(tensor), {}, {}};
  ++exportedAlive;
  const std::vector<int64_t> &shape = exported->tensor.shape();
  exported->strides.assign(shape.size(), 1);
  for (int dim = static_cast<int>(shape.size()) - 2; dim >= 0; --dim)
    exported->strides[dim] = exported->strides[dim + 1] * shape[dim + 1];
  DLTensor &out = exported->managed.dl_tensor;
  out.data = exported->tensor.mutable_data();
  out.device = {kDLCPU, 0};
  out.ndim = static_cast<int32_t>(shape.size());
  out.dtype = dlpackType(exported->tensor.dtype());
  out.shape = const_cast<int64_t *>(shape.data());
  out.strides = exported->strides.data();
  out.byte_offset = 0;
  exported->managed.manager_ctx = exported;
  exported->managed.deleter = deleteExported;
  PyObject *capsule =
      PyCapsule_New(&exported->managed, kCapsuleName, destroyCapsule);
  if (!capsule) {
    deleteExported(&exported->managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

int64_t exportedTensorsAlive() { return exportedAlive.load(); }

} // namespace modelc::python
