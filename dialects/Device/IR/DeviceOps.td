//===- DeviceOps.td - device dialect operations ------------*- tablegen -*-===//

#ifndef MODELC_DEVICE_OPS_TD
#define MODELC_DEVICE_OPS_TD

include "dialects/Device/IR/DeviceAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Device_TransferOp : Op<Device_Dialect, "transfer",
    [Pure, SameOperandsAndResultType]> {
  let summary = "Copies a value from one device to another.";
  let description = [{
    The result is `input`, resident on `target`. Transfer insertion adds one
    per (value, destination device) on edges that cross devices, never one
    per use and never between two ops on the same device.

    Verifier: `source` and `target` differ.

    ```mlir
    %y = device.transfer %x from <cpu> to <cuda:0> : tensor<64x784xf32>
    ```

    Canonicalization: a transfer of a transfer becomes one transfer from the
    first source (or nothing, when it returns to that source).
  }];
  let arguments = (ins AnyRankedTensor:$input, Device_DeviceAttr:$source,
                       Device_DeviceAttr:$target);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `from` $source `to` $target attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

#endif // MODELC_DEVICE_OPS_TD
