//===- SchedDialect.h - the sched dialect -----------------------*- C++ -*-===//

#ifndef MODELC_DIALECTS_SCHED_IR_SCHEDDIALECT_H
#define MODELC_DIALECTS_SCHED_IR_SCHEDDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Sched/IR/SchedDialect.h.inc"

#endif // MODELC_DIALECTS_SCHED_IR_SCHEDDIALECT_H
