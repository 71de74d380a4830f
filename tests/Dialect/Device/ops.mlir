// RUN: modelc-opt %s | FileCheck %s
// RUN: modelc-opt %s | modelc-opt | FileCheck %s
// RUN: modelc-opt %s --mlir-print-op-generic | modelc-opt | FileCheck %s

// CHECK-LABEL: func.func @transfers
func.func @transfers(%x: tensor<64x784xf32>) -> tensor<64x784xf32> {
  // CHECK: %[[A:.*]] = device.transfer %{{.*}} from <cpu> to <cuda:0> : tensor<64x784xf32>
  %0 = device.transfer %x from <cpu> to <cuda:0> : tensor<64x784xf32>
  // CHECK: %[[B:.*]] = device.transfer %[[A]] from <cuda:0> to <cuda:1> : tensor<64x784xf32>
  %1 = device.transfer %0 from <cuda:0> to <cuda:1> : tensor<64x784xf32>
  // CHECK: device.transfer %[[B]] from <cuda:1> to <sim:3> : tensor<64x784xf32>
  %2 = device.transfer %1 from <cuda:1> to <sim:3> : tensor<64x784xf32>
  return %2 : tensor<64x784xf32>
}

// The device, device_spec, link and target attributes, attached to a module
// the way a plan's target will be.
// CHECK-LABEL: func.func @target_attribute
// CHECK-SAME: device.target = #device.target<name = "cpu+sim1", devices = [#device.device_spec<device = <cpu>, memory = 68719476736, bandwidth = 1.000000e+11 : f64, launch_overhead = 0.000000e+00 : f64, peak_flops = {f32 = 1.000000e+12 : f64}>, #device.device_spec<device = <sim:0>, memory = 1073741824, bandwidth = 1.000000e+12 : f64, launch_overhead = 5.000000e-06 : f64, peak_flops = {bf16 = 1.000000e+14 : f64, f16 = 1.000000e+14 : f64, f32 = 1.000000e+13 : f64}>], links = [#device.link<from = <cpu>, to = <sim:0>, bandwidth = 6.400000e+10 : f64, latency = 1.000000e-05 : f64>, #device.link<from = <sim:0>, to = <cpu>, bandwidth = 6.400000e+10 : f64, latency = 1.000000e-05 : f64>]>
func.func @target_attribute() attributes {
  device.target = #device.target<name = "cpu+sim1",
    devices = [
      #device.device_spec<device = <cpu>, memory = 68719476736, bandwidth = 1.0e11,
                          launch_overhead = 0.0, peak_flops = {f32 = 1.0e12}>,
      #device.device_spec<device = <sim:0>, memory = 1073741824, bandwidth = 1.0e12,
                          launch_overhead = 5.0e-6,
                          peak_flops = {f32 = 1.0e13, f16 = 1.0e14, bf16 = 1.0e14}>],
    links = [
      #device.link<from = <cpu>, to = <sim:0>, bandwidth = 6.4e10, latency = 1.0e-5>,
      #device.link<from = <sim:0>, to = <cpu>, bandwidth = 6.4e10, latency = 1.0e-5>]>
} {
  return
}

// A CPU-only target has no links.
// CHECK-LABEL: func.func @cpu_target
// CHECK-SAME: links = []
func.func @cpu_target() attributes {
  device.target = #device.target<name = "cpu", devices = [
    #device.device_spec<device = <cpu>, memory = 1024, bandwidth = 1.0e11,
                        launch_overhead = 0.0, peak_flops = {f32 = 1.0e12}>],
    links = []>
} {
  return
}

// CHECK-LABEL: func.func @device_attributes
// CHECK-SAME: a = #device.dev<cpu>, b = #device.dev<cuda:7>, c = #device.dev<sim:0>
func.func @device_attributes() attributes {a = #device.dev<cpu>, b = #device.dev<cuda:7>, c = #device.dev<sim:0>} {
  return
}
