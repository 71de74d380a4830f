//===- PlacementSummary.h - a one-screen table of a placement ---*- C++ -*-===//

#ifndef MODELC_COMPILER_TRANSFORMS_PLACEMENTSUMMARY_H
#define MODELC_COMPILER_TRANSFORMS_PLACEMENTSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace modelc {

/// For a placed module (after modelc-place and modelc-insert-transfers):
/// per device the ops, the resident weights and the transfers that arrive.
void printPlacementSummary(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace modelc

#endif // MODELC_COMPILER_TRANSFORMS_PLACEMENTSUMMARY_H
