// abi_callbacks.hpp - the function table generated code calls
// (modelc_runtime_api): each callback finds the run and the Device it
// names and lets that do the work.
#ifndef MODELC_RUNTIME_ABI_CALLBACKS_HPP
#define MODELC_RUNTIME_ABI_CALLBACKS_HPP

#include "modelc/abi.h"

namespace modelc::detail {

/// The runtime's callbacks; ctx->runtime is the run's RunState.
modelc_runtime_api runtimeApi();

struct RunState;
/// Waits for the sums the run started (all_reduce_start) and did not wait
/// for (a run that failed between a start and its wait): their memory is
/// the run's. Reports the first failure unless the run has an error.
void waitForStartedSums(RunState &run);

/// ctx->trace of a traced run (RunState::trace): times trace point `point`
/// on its device.
void traceCallback(modelc_run_ctx *ctx, uint32_t point, uint32_t phase);

} // namespace modelc::detail

#endif // MODELC_RUNTIME_ABI_CALLBACKS_HPP
