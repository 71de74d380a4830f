//===- DeviceBase.td - the device dialect definition -------*- tablegen -*-===//
//
// The `device` dialect names where computation runs: a device attribute
// (`cpu`, `cuda:N`, `sim:N`), a target description (devices and links with
// their performance figures) and the op that moves a value between devices.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_DEVICE_BASE_TD
#define MODELC_DEVICE_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Device_Dialect : Dialect {
  let name = "device";
  let cppNamespace = "::modelc::device";
  let summary = "Devices, target descriptions and transfers between devices.";
  let description = [{
    The `device` dialect describes the machine a plan runs on. A device is a
    kind (`cpu`, `cuda`, or `sim` for the simulated GPU used in testing) and an
    index, printed `cpu`, `cuda:1`, `sim:0`. A target lists devices with their
    memory capacity, peak FLOP/s per element type, memory bandwidth and kernel
    launch overhead, and the links between them. `device.transfer` copies a
    value from one device to another.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // MODELC_DEVICE_BASE_TD
