//===- ParseModel.h - reads a model and its argument names -----*- C++ -*-===//
//
// Parses and verifies a model's source, keeping the names its entry points
// give their arguments (MLIR itself drops SSA names).
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_TOOLS_MODELC_PARSEMODEL_H
#define MODELC_TOOLS_MODELC_PARSEMODEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"

#include <string>
#include <vector>

namespace modelc::driver {

/// Rejects input nested deeper than MLIR's recursive parser can take (an
/// error at the place, through `context`'s diagnostics) before it is parsed:
/// brackets nested more than 256 levels deep, or more than 256 unary minus
/// signs in a row.
mlir::LogicalResult checkNesting(llvm::SourceMgr &sourceMgr,
                                 mlir::MLIRContext &context);

/// The source names of each function's arguments, by function name.
using ArgumentNames = llvm::StringMap<std::vector<std::string>>;

/// Parses and verifies the main file of `sourceMgr` (a module, or ops that
/// become one) and records the names of its functions' arguments; null
/// after an error.
mlir::OwningOpRef<mlir::ModuleOp> parseModel(llvm::SourceMgr &sourceMgr,
                                             mlir::MLIRContext &context,
                                             ArgumentNames &argumentNames);

/// Inputs keep the names they have in the source: sets `graph.name` on each
/// argument that has none.
void nameArguments(mlir::ModuleOp module, const ArgumentNames &argumentNames);

} // namespace modelc::driver

#endif // MODELC_TOOLS_MODELC_PARSEMODEL_H
