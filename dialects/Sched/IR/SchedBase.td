//===- SchedBase.td - the sched dialect definition ---------*- tablegen -*-===//
//
// The `sched` dialect is the scheduled form of a placed model: every
// decision the back end takes (which elementwise ops share a loop, ...) is
// written down in it, so the printers only spell what it says.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_SCHED_BASE_TD
#define MODELC_SCHED_BASE_TD

include "mlir/IR/OpBase.td"

def Sched_Dialect : Dialect {
  let name = "sched";
  let cppNamespace = "::modelc::sched";
  let summary = "The scheduled IR: the back end's decisions, written down.";
  let description = [{
    After placement and transfer insertion, the lowering passes
    (docs/design.md, "Pipeline") rewrite a placed graph into this form:
    `sched.fused` holds a group of elementwise ops computed in one loop
    (one kernel on a GPU); `sched.gemm` a matrix product with what cuBLASLt
    computes with it (a relu epilogue, alpha, a residual C, operands read
    in place as strided views); `sched.sliced_transpose` a transpose whose
    kernel also does the slice before it. `modelc-plan-memory` adds the
    arena offset of every buffer (`sched.buffer`, `sched.scratch`), the
    arena sizes per device (`sched.arenas` on the function) and the GPUs'
    error words (`sched.error_words`); the verifier of `sched.arenas`
    checks that no two buffers alive at the same time overlap.
    `modelc-schedule-streams` adds each op's stream (`sched.stream`), the
    event it records (`sched.record`), the events its stream waits for
    (`sched.waits`) and the function's event count (`sched.events`), whose
    verifier checks that each event is recorded once and waited for only
    after an earlier op records it. The printers (host C++, CPU kernels,
    CUDA kernels) read it and decide nothing.
  }];
  let dependentDialects = ["::modelc::graph::GraphDialect",
                           "::modelc::device::DeviceDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Sched_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sched_Dialect, mnemonic, traits>;

class Sched_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Sched_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // MODELC_SCHED_BASE_TD
