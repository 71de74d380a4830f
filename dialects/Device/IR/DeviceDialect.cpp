//===- DeviceDialect.cpp - the device dialect -------------------*- C++ -*-===//

#include "dialects/Device/IR/DeviceDialect.h"
#include "dialects/Device/IR/DeviceAttrs.h"
#include "dialects/Device/IR/DeviceOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace modelc::device;

#include "dialects/Device/IR/DeviceDialect.cpp.inc"

void DeviceDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/Device/IR/DeviceOps.cpp.inc"
      >();
}
