//===- GraphDialect.h - the graph dialect -----------------------*- C++ -*-===//

#ifndef MODELC_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
#define MODELC_DIALECTS_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/IR/GraphDialect.h.inc"

#endif // MODELC_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
