//===- DeviceDialect.h - the device dialect ---------------------*- C++ -*-===//

#ifndef MODELC_DIALECTS_DEVICE_IR_DEVICEDIALECT_H
#define MODELC_DIALECTS_DEVICE_IR_DEVICEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Device/IR/DeviceDialect.h.inc"

#endif // MODELC_DIALECTS_DEVICE_IR_DEVICEDIALECT_H
