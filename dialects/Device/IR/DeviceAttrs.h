//===- DeviceAttrs.h - device, target and link attributes -------*- C++ -*-===//

#ifndef MODELC_DIALECTS_DEVICE_IR_DEVICEATTRS_H
#define MODELC_DIALECTS_DEVICE_IR_DEVICEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/Device/IR/DeviceEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Device/IR/DeviceAttrs.h.inc"

#endif // MODELC_DIALECTS_DEVICE_IR_DEVICEATTRS_H
