//===- DeviceOps.h - device dialect operations ------------------*- C++ -*-===//

#ifndef MODELC_DIALECTS_DEVICE_IR_DEVICEOPS_H
#define MODELC_DIALECTS_DEVICE_IR_DEVICEOPS_H

#include "dialects/Device/IR/DeviceAttrs.h"
#include "dialects/Device/IR/DeviceDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Device/IR/DeviceOps.h.inc"

#endif // MODELC_DIALECTS_DEVICE_IR_DEVICEOPS_H
