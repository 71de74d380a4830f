// RUN: modelc-opt %s --split-input-file --verify-diagnostics

// One case per user-facing verifier message of the device dialect.

func.func @transfer_to_itself(%x: tensor<4xf32>) {
  // expected-error @+1 {{'device.transfer' op transfers a value from device 'cuda:0' to itself}}
  %0 = device.transfer %x from <cuda:0> to <cuda:0> : tensor<4xf32>
  return
}

// -----

func.func @unknown_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown device kind 'gpu'; expected 'cpu', 'cuda' or 'sim'}}
  %0 = device.transfer %x from <cpu> to <gpu:0> : tensor<4xf32>
  return
}

// -----

func.func @cpu_with_index(%x: tensor<4xf32>) {
  // expected-error @+1 {{the CPU device has no index; expected 'cpu', got 'cpu:1'}}
  %0 = device.transfer %x from <cpu:1> to <cuda:0> : tensor<4xf32>
  return
}

// -----

func.func @cuda_without_index(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected ':'}}
  %0 = device.transfer %x from <cpu> to <cuda> : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{device 'cuda:0': memory must be positive, got 0}}
func.func @zero_memory() attributes {t = #device.device_spec<device = <cuda:0>, memory = 0, bandwidth = 1.0e12, launch_overhead = 5.0e-6, peak_flops = {f32 = 1.0e13}>} {
  return
}

// -----

// expected-error @+1 {{device 'cuda:0': bandwidth must be a positive number of bytes/s, got -1.000000e+00}}
func.func @negative_bandwidth() attributes {t = #device.device_spec<device = <cuda:0>, memory = 1, bandwidth = -1.0, launch_overhead = 5.0e-6, peak_flops = {f32 = 1.0e13}>} {
  return
}

// -----

// expected-error @+1 {{device 'cuda:0': launch_overhead must be >= 0 seconds, got -5.000000e-06}}
func.func @negative_overhead() attributes {t = #device.device_spec<device = <cuda:0>, memory = 1, bandwidth = 1.0, launch_overhead = -5.0e-6, peak_flops = {f32 = 1.0e13}>} {
  return
}

// -----

// expected-error @+1 {{device 'cuda:0': peak_flops must name at least one element type}}
func.func @no_flops() attributes {t = #device.device_spec<device = <cuda:0>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {}>} {
  return
}

// -----

// expected-error @+1 {{device 'cuda:0': peak_flops key 'f64' is not an element type; expected one of f32, f16, bf16, i32, i64}}
func.func @flops_f64() attributes {t = #device.device_spec<device = <cuda:0>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f64 = 1.0e12}>} {
  return
}

// -----

// expected-error @+1 {{device 'cuda:0': peak_flops.f32 must be a positive float, got 7 : i64}}
func.func @flops_integer() attributes {t = #device.device_spec<device = <cuda:0>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f32 = 7}>} {
  return
}

// -----

// expected-error @+1 {{link from device 'cpu' to itself}}
func.func @self_link() attributes {t = #device.link<from = <cpu>, to = <cpu>, bandwidth = 1.0, latency = 0.0>} {
  return
}

// -----

// expected-error @+1 {{link cpu -> cuda:0: bandwidth must be a positive number of bytes/s, got 0.000000e+00}}
func.func @link_bandwidth() attributes {t = #device.link<from = <cpu>, to = <cuda:0>, bandwidth = 0.0, latency = 0.0>} {
  return
}

// -----

// expected-error @+1 {{link cpu -> cuda:0: latency must be >= 0 seconds, got -1.000000e+00}}
func.func @link_latency() attributes {t = #device.link<from = <cpu>, to = <cuda:0>, bandwidth = 1.0, latency = -1.0>} {
  return
}

// -----

// expected-error @+1 {{target 't': devices must be #device.device_spec, got 1 : i64}}
func.func @target_bad_device() attributes {t = #device.target<name = "t", devices = [1], links = []>} {
  return
}

// -----

// expected-error @+1 {{target 't': device 'cpu' is listed twice}}
func.func @target_duplicate() attributes {t = #device.target<name = "t", devices = [
    #device.device_spec<device = <cpu>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f32 = 1.0}>,
    #device.device_spec<device = <cpu>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f32 = 1.0}>], links = []>} {
  return
}

// -----

// expected-error @+1 {{target 't' has no 'cpu' device; every target has one}}
func.func @target_no_cpu() attributes {t = #device.target<name = "t", devices = [
    #device.device_spec<device = <cuda:0>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f32 = 1.0}>], links = []>} {
  return
}

// -----

// expected-error @+1 {{target 't': links must be #device.link, got "x"}}
func.func @target_bad_link() attributes {t = #device.target<name = "t", devices = [
    #device.device_spec<device = <cpu>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f32 = 1.0}>], links = ["x"]>} {
  return
}

// -----

// expected-error @+1 {{target 't': link cpu -> cuda:3 names device 'cuda:3', which the target lacks}}
func.func @target_unknown_link_end() attributes {t = #device.target<name = "t", devices = [
    #device.device_spec<device = <cpu>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f32 = 1.0}>],
    links = [#device.link<from = <cpu>, to = <cuda:3>, bandwidth = 1.0, latency = 0.0>]>} {
  return
}

// -----

// expected-error @+1 {{target 't': link cpu -> cuda:0 is listed twice}}
func.func @target_duplicate_link() attributes {t = #device.target<name = "t", devices = [
    #device.device_spec<device = <cpu>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f32 = 1.0}>,
    #device.device_spec<device = <cuda:0>, memory = 1, bandwidth = 1.0, launch_overhead = 0.0, peak_flops = {f32 = 1.0}>],
    links = [#device.link<from = <cpu>, to = <cuda:0>, bandwidth = 1.0, latency = 0.0>,
             #device.link<from = <cpu>, to = <cuda:0>, bandwidth = 2.0, latency = 0.0>]>} {
  return
}

// -----

func.func @transfer_type_changes(%x: tensor<4xf32>) {
  // expected-error @+1 {{'device.transfer' op requires the same type for all operands and results}}
  %0 = "device.transfer"(%x) <{source = #device.dev<cpu>, target = #device.dev<cuda:0>}> : (tensor<4xf32>) -> tensor<4xf16>
  return
}
