// dlpack.h - the DLPack tensor-exchange ABI (the structs the module reads
// and writes), as defined by dmlc/dlpack's include/dlpack/dlpack.h, v0.8
// (Apache-2.0; https://github.com/dmlc/dlpack), whose copyright line is:
//
//   Copyright (c) 2017 by Contributors
//
// Only the pre-1.0 ABI that numpy 1.24 and PyTorch 1.13 speak: a PyCapsule
// named "dltensor" holding a DLManagedTensor. The layout is frozen by that
// specification; Debian has no package for the header, so the few
// definitions are copied here.
#ifndef MODELC_PYTHON_DLPACK_H
#define MODELC_PYTHON_DLPACK_H

#include <cstdint>

extern "C" {

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; ///< In elements; NULL means compact row-major.
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

} // extern "C"

#endif // MODELC_PYTHON_DLPACK_H
