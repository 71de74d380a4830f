//===- EmitHelpers.h - text helpers shared by the code emitters -*- C++ -*-===//
//
// What the host C++ emitter (HostPrinter.cpp) and the CUDA emitter
// (CudaPrinter.cpp) both write: storage and compute types, element loads and
// stores, the expression of one element of an elementwise op, literals and
// shape arithmetic. `CodeFlavor` picks the spelling: host C++ (std::,
// modelc_cpu::) or CUDA device code (expf, modelc_gpu::).
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_CODEGEN_EMITHELPERS_H
#define MODELC_COMPILER_CODEGEN_EMITHELPERS_H

#include "dialects/Graph/IR/GraphOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace modelc::codegen {

enum class CodeFlavor { Cpu, Gpu };

bool isHalf(mlir::Type type);
/// The C++ storage type of an element type (f16/bf16: uint16_t).
std::string cType(mlir::Type type);
/// The C++ type elementwise code computes in: f16/bf16 compute in float.
std::string computeType(mlir::Type type);
/// `expr` (a stored element of `type`) as its compute type, and back.
std::string loadElement(mlir::Type type, const std::string &expr,
                        CodeFlavor flavor = CodeFlavor::Cpu);
std::string storeElement(mlir::Type type, const std::string &expr,
                         CodeFlavor flavor = CodeFlavor::Cpu);
mlir::RankedTensorType tensorType(mlir::Value v);
/// "1, 2, 3"
std::string list(llvm::ArrayRef<int64_t> values);
/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);
/// Strides to read an operand of shape `in` broadcast to `out` (right
/// aligned), with stride 0 on broadcast dimensions.
llvm::SmallVector<int64_t> broadcastStrides(llvm::ArrayRef<int64_t> in,
                                            llvm::ArrayRef<int64_t> out);
int64_t product(llvm::ArrayRef<int64_t> dims);
/// A float literal ("1.5f"), or the expression of an infinity or NaN.
std::string floatLiteral(double value, CodeFlavor flavor = CodeFlavor::Cpu);
/// A C++ literal of element type `type` with `value`: a float literal for
/// f32/f16/bf16 (they compute in float), a double one for f64, an integer
/// of the C type otherwise.
std::string literalOf(mlir::Type type, double value,
                      CodeFlavor flavor = CodeFlavor::Cpu);
/// A splat graph.constant's value in its compute type (a float for f16 and
/// bf16, whose values a float holds exactly): a literal of the loop.
std::string splatExpression(modelc::graph::ConstantOp constant,
                            CodeFlavor flavor = CodeFlavor::Cpu);
/// C++ for one element of an elementwise op, given its operands' element
/// expressions (in their compute types).
std::string elementExpression(mlir::Operation *op,
                              llvm::ArrayRef<std::string> args,
                              CodeFlavor flavor = CodeFlavor::Cpu);
/// The initializer list of a graph.constant's values as a C array of its
/// storage type ("1.5f, 2.0f"; "0" for an empty tensor).
std::string constantInitializer(mlir::Operation *constant,
                                CodeFlavor flavor = CodeFlavor::Cpu);
/// The same for any dense elements (an entry point input's default).
std::string elementsInitializer(mlir::DenseElementsAttr values,
                                CodeFlavor flavor = CodeFlavor::Cpu);
/// The op whose name and line a task of `op` carries: a group (sched
/// dialect) is named after the graph op it is built around (the product of
/// a sched.gemm, the transpose of a sched.sliced_transpose, the last op of
/// a sched.fused).
mlir::Operation *namedOp(mlir::Operation *op);
/// The values `op` reads: its operands, then the values from above its
/// body reads (a sched.gemm's), in order, each once.
llvm::SmallVector<mlir::Value> valuesRead(mlir::Operation *op);
/// A C string literal of `text`.
std::string cString(llvm::StringRef text);

} // namespace modelc::codegen

#endif // MODELC_COMPILER_CODEGEN_EMITHELPERS_H
