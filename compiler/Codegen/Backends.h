//===- Backends.h - which device kind's printer can emit an op --*- C++ -*-===//
//
// The backend registry: placement asks it before it puts an op on a device,
// so it never chooses what a printer cannot emit. The answer comes from the
// printers: an elementwise op has a kernel where EmitHelpers spells its
// element expression for that flavor, any other op where the printer of
// the kind lists it (with its element-type rules). The default is no.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_CODEGEN_BACKENDS_H
#define MODELC_COMPILER_CODEGEN_BACKENDS_H

#include "dialects/Device/IR/DeviceAttrs.h"
#include "mlir/IR/Operation.h"

namespace modelc {

/// Whether devices of `kind` have a kernel for `op` with its element types
/// (cpu and sim run the host printer's code, cuda the CUDA printer's). Ops
/// that need no code (weights, constants, views, transfers) run anywhere.
bool hasKernel(mlir::Operation *op, device::DeviceKind kind);

} // namespace modelc

#endif // MODELC_COMPILER_CODEGEN_BACKENDS_H
