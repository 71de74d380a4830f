// RUN: modelc-opt %s --split-input-file --modelc-place=target=cpu+sim2 --verify-diagnostics

// A hand-written transfer to a device the target does not have is an error
// at compile time (it compiled and the model crashed when it ran: issue
// 28, from the IR fuzzer's mutants).
func.func @transfers(%x: tensor<64x784xf32>) -> tensor<64x784xf32> {
  // expected-error @+1 {{device.transfer names 'sim:3', which target 'cpu+sim2' does not have (it has cpu, sim:0, sim:1)}}
  %0 = device.transfer %x from <cpu> to <sim:3> : tensor<64x784xf32>
  return %0 : tensor<64x784xf32>
}

// -----

func.func @from_unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{device.transfer names 'cuda:0', which target 'cpu+sim2' does not have}}
  %0 = device.transfer %x from <cuda:0> to <cpu> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
