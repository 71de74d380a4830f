//===- Passes.h - modelc compiler passes ------------------------*- C++ -*-===//

#ifndef MODELC_COMPILER_TRANSFORMS_PASSES_H
#define MODELC_COMPILER_TRANSFORMS_PASSES_H

#include "dialects/Device/IR/DeviceDialect.h"
#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Sched/IR/SchedDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace modelc {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

} // namespace modelc

#endif // MODELC_COMPILER_TRANSFORMS_PASSES_H
