//===- DeviceAttrs.td - device, target and link attributes -*- tablegen -*-===//

#ifndef MODELC_DEVICE_ATTRS_TD
#define MODELC_DEVICE_ATTRS_TD

include "dialects/Device/IR/DeviceBase.td"
include "mlir/IR/EnumAttr.td"

def Device_DeviceKind : I32EnumAttr<"DeviceKind", "kind of device", [
    I32EnumAttrCase<"cpu", 0>,
    I32EnumAttrCase<"cuda", 1>,
    I32EnumAttrCase<"sim", 2>]> {
  let cppNamespace = "::modelc::device";
  let genSpecializedAttr = 0;
}


class Device_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Device_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Device_DeviceAttr : Device_Attr<"Device", "dev"> {
  let summary = "One device: `cpu`, `cuda:N` or `sim:N`.";
  let description = [{
    Names one device of a plan. Printed `#device.dev<cuda:1>`; the CPU is
    `#device.dev<cpu>` (its index is always 0). Graph ops also accept the same
    spelling as a string pin, `{device = "cuda:1"}`.
  }];
  let parameters = (ins "DeviceKind":$kind, "unsigned":$index);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Parses "cpu", "cuda:N" or "sim:N"; returns a null attribute on failure.
    static DeviceAttr parseFromString(::mlir::MLIRContext *context,
                                      ::llvm::StringRef text);
    /// The spelling used in pins, reports and file names: "cpu", "cuda:1".
    std::string str() const;
  }];
}

def Device_DeviceSpecAttr : Device_Attr<"DeviceSpec", "device_spec"> {
  let summary = "One device of a target with its performance figures.";
  let description = [{
    `memory` is the capacity in bytes; `bandwidth` the memory bandwidth in
    bytes/s; `launch_overhead` the fixed cost of one kernel launch in seconds;
    `peak_flops` maps element-type names (`f32`, `f16`, `bf16`, `i32`, `i64`)
    to peak operations per second.

    ```mlir
    #device.device_spec<device = <cuda:0>, memory = 141000000000,
        bandwidth = 4.8e12, launch_overhead = 4e-06,
        peak_flops = {bf16 = 9.9e14, f16 = 9.9e14, f32 = 6.7e13}>
    ```
  }];
  let parameters = (ins "DeviceAttr":$device, "uint64_t":$memory,
                        "::mlir::FloatAttr":$bandwidth,
                        "::mlir::FloatAttr":$launch_overhead,
                        "::mlir::DictionaryAttr":$peak_flops);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Device_LinkSpecAttr : Device_Attr<"LinkSpec", "link"> {
  let summary = "A one-way link between two devices of a target.";
  let description = [{
    `bandwidth` in bytes/s, `latency` in seconds. A link is directed; a
    target usually lists both directions.

    ```mlir
    #device.link<from = <cpu>, to = <cuda:0>, bandwidth = 6.4e10, latency = 1e-05>
    ```
  }];
  let parameters = (ins "DeviceAttr":$from, "DeviceAttr":$to,
                        "::mlir::FloatAttr":$bandwidth, "::mlir::FloatAttr":$latency);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Device_TargetAttr : Device_Attr<"Target", "target"> {
  let summary = "The machine one plan runs on: devices and links.";
  let description = [{
    A named list of devices and the links between them. Device names are
    unique, the CPU is always present, and every link joins two listed
    devices.

    ```mlir
    #device.target<name = "cpu+sim2",
      devices = [#device.device_spec<...>, ...],
      links = [#device.link<...>, ...]>
    ```
  }];
  let parameters = (ins StringRefParameter<"target name">:$name,
                        "::mlir::ArrayAttr":$devices,
                        "::mlir::ArrayAttr":$links);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The spec of `device`, or null if the target lacks it.
    DeviceSpecAttr lookup(DeviceAttr device) const;
    /// The link from `from` to `to`, or null if there is none.
    LinkSpecAttr lookupLink(DeviceAttr from, DeviceAttr to) const;
  }];
}

#endif // MODELC_DEVICE_ATTRS_TD
