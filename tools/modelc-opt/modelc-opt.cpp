//===- modelc-opt.cpp - mlir-opt with modelc's dialects and passes --------===//

#include "compiler/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  modelc::registerModelcPassesAndPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "modelc optimizer driver: modelc's dialects and passes\n",
      registry));
}
