//===- Backends.h - which device kind's printer can emit an op --*- C++ -*-===//
//
// The backend registry: placement asks it before it puts an op on a device,
// so it never chooses what a printer cannot emit. The answer comes from the
// printers themselves: an elementwise op has a kernel where EmitHelpers
// spells its element expression for that flavor (fused loops print them),
// any other op where the printer's kernel table (KernelTable below) has an
// entry for it that accepts its types. The default is no.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_CODEGEN_BACKENDS_H
#define MODELC_COMPILER_CODEGEN_BACKENDS_H

#include "dialects/Device/IR/DeviceAttrs.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <type_traits>

namespace modelc {

/// Whether devices of `kind` have a kernel for `op` with its element types
/// (cpu and sim run the host printer's code, cuda the CUDA printer's). Ops
/// that need no code (weights, constants, views, transfers) run anywhere.
bool hasKernel(mlir::Operation *op, device::DeviceKind kind);

/// Any operand types.
inline bool anyTypes(mlir::Operation *) { return true; }
/// The first operand is an f32, f16 or bf16 tensor (the kernels of matrix
/// products, convolutions, norms, pools and, on GPUs, reductions exist for
/// these only; not for f64).
bool floatOperands(mlir::Operation *op);
/// Whether `type` is an element type only the host printer has kernels
/// for: f64, the 8- and 16-bit integers and the unsigned ones. An op with
/// an operand or result of such a type has no kernel on a GPU.
bool isHostOnlyElementType(mlir::Type type);

/// How a kernel computes: in its operands' own types, or in f32 (the host
/// printer then gives f16/bf16 operands and results f32 copies around it).
enum class Compute { InOperandTypes, InF32 };

/// A printer's kernels, by op kind: the function that prints one op of that
/// kind, and which operand types it takes. Each printer builds one table
/// and dispatches through it; hasKernel reads the same tables, so an op
/// placement puts on a device is one its printer prints.
template <typename Printer> class KernelTable {
public:
  using Print =
      std::function<mlir::LogicalResult(mlir::Operation *, Printer &)>;
  using Accepts = bool (*)(mlir::Operation *);
  struct Kernel {
    Print print;
    Accepts accepts;
    Compute compute;
  };

  /// Registers `print` for OpT: a member function of Printer taking OpT, or
  /// a function taking (OpT, Printer &).
  template <typename OpT, typename Fn>
  KernelTable &add(Fn print, Accepts accepts = anyTypes,
                   Compute compute = Compute::InOperandTypes) {
    kernels[mlir::TypeID::get<OpT>()] = {
        [print](mlir::Operation *op, Printer &printer) {
          if constexpr (std::is_member_function_pointer_v<Fn>)
            return (printer.*print)(llvm::cast<OpT>(op));
          else
            return print(llvm::cast<OpT>(op), printer);
        },
        accepts, compute};
    return *this;
  }

  /// The kernel of `op`'s kind, or null.
  const Kernel *lookup(mlir::Operation *op) const {
    auto it = kernels.find(op->getName().getTypeID());
    return it == kernels.end() ? nullptr : &it->second;
  }

  /// Whether `op`'s kernel computes in f32.
  bool computesInF32(mlir::Operation *op) const {
    const Kernel *kernel = lookup(op);
    return kernel && kernel->compute == Compute::InF32;
  }

  /// Whether the printer prints `op` with its types.
  bool prints(mlir::Operation *op) const {
    const Kernel *kernel = lookup(op);
    return kernel && kernel->accepts(op);
  }

private:
  llvm::DenseMap<mlir::TypeID, Kernel> kernels;
};

} // namespace modelc

#endif // MODELC_COMPILER_CODEGEN_BACKENDS_H
