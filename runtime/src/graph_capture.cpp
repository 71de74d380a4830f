// graph_capture.cpp - a run of a GPU plan as a CUDA graph
// (LoadOptions::cuda_graphs): captured once per run resources, replayed
// with one launch by every run after.
#include "device_cuda.hpp"
#include "run_state.hpp"

namespace modelc::detail {

namespace {

/// A run's captured graph, and the fork and join events of its capture
/// with their contexts.
struct CudaGraph : RunCapture::Graph {
  CudaGraph(const CudaApi &cuda, CUcontext ctx) : cuda(cuda), ctx(ctx) {}
  // On whichever thread drops the run's resources: each call in the
  // context it needs (without one it fails and the graph would leak).
  ~CudaGraph() override {
    if (exec && cuda.cuCtxSetCurrent(ctx) == 0)
      cuda.cuGraphExecDestroy(exec);
    for (auto &[event, eventCtx] : events)
      if (cuda.cuCtxSetCurrent(eventCtx) == 0)
        cuda.cuEventDestroy(event);
  }
  const CudaApi &cuda;
  CUcontext ctx; // the origin's: the graph was instantiated there
  CUgraphExec exec = nullptr;
  std::vector<std::pair<CUevent, CUcontext>> events;
};

/// The capture of one run: reports a failed call for the run.
struct Capture {
  const CudaApi &cuda;
  RunState &run;
  CudaGraph &graph;
  CudaRun &origin;
  const std::string &name; // the origin's
  /// The run's CUDA streams but the origin's compute stream, with their
  /// contexts.
  std::vector<std::pair<CUstream, CUcontext>> others;

  bool failed(CUresult rc, const char *call, const std::string &what) {
    if (rc == 0)
      return false;
    run.reportError(std::string(call) + " failed on " + name + " (" + what +
                    "): " + cudaErrorName(rc));
    return true;
  }
  CUevent newEvent(CUcontext c) {
    CUevent e = nullptr;
    if (failed(cuda.cuCtxSetCurrent(c), "cuCtxSetCurrent",
               "a CUDA graph's fork or join"))
      return nullptr;
    if (!failed(cuda.cuEventCreate(&e, 2 /* DISABLE_TIMING */), "cuEventCreate",
                "a CUDA graph's fork or join"))
      graph.events.push_back({e, c});
    return e;
  }
  /// Every other stream of the run joins the capture of the origin's.
  void fork(const std::string &what) {
    CUevent fork = newEvent(origin.ctx);
    if (fork)
      failed(cuda.cuEventRecord(fork, origin.computeStream), "cuEventRecord",
             what);
    for (auto &[s, c] : others)
      if (fork && !failed(cuda.cuCtxSetCurrent(c), "cuCtxSetCurrent", what))
        failed(cuda.cuStreamWaitEvent(s, fork, 0), "cuStreamWaitEvent", what);
  }
  /// The origin waits for every other stream's last work.
  void join(const std::string &what) {
    for (auto &[s, c] : others) {
      CUevent join = newEvent(c);
      if (!join)
        continue;
      if (!failed(cuda.cuCtxSetCurrent(c), "cuCtxSetCurrent", what))
        failed(cuda.cuEventRecord(join, s), "cuEventRecord", what);
      if (!failed(cuda.cuCtxSetCurrent(origin.ctx), "cuCtxSetCurrent", what))
        failed(cuda.cuStreamWaitEvent(origin.computeStream, join, 0),
               "cuStreamWaitEvent", what);
    }
  }
  /// Captures what `issue` enqueues into graph.exec (relaxed mode: the
  /// host workers issue from their own threads); false on failure.
  bool capture(const std::function<int()> &issue, const std::string &what) {
    RunCapture &state = run.resources->capture;
    if (failed(cuda.cuCtxSetCurrent(origin.ctx), "cuCtxSetCurrent", what) ||
        failed(
            cuda.cuStreamBeginCapture(origin.computeStream,
                                      2 /* CU_STREAM_CAPTURE_MODE_RELAXED */),
            "cuStreamBeginCapture", what))
      return false;
    fork(what);
    state.capturing = true;
    state.hostTasks.clear();
    int status = issue();
    join(what);
    CUgraph captured = nullptr;
    CUresult rc = cuda.cuCtxSetCurrent(origin.ctx);
    if (rc == 0)
      rc = cuda.cuStreamEndCapture(origin.computeStream, &captured);
    state.capturing = false;
    bool ok = !failed(rc, "cuStreamEndCapture", what) && status == 0 &&
              run.error.empty() && captured;
    if (ok)
      ok = !failed(cuda.cuGraphInstantiate(&graph.exec, captured, 0),
                   "cuGraphInstantiate", what);
    if (captured)
      cuda.cuGraphDestroy(captured);
    if (!ok) {
      graph.exec = nullptr;
      if (run.error.empty())
        run.reportError(what + " failed");
    }
    return ok;
  }
};

} // namespace

void CudaDevice::runCaptured(RunState &run, const std::function<int()> &issue) {
  RunCapture &state = run.resources->capture;
  if (!state.graph)
    state.graph = std::make_unique<CudaGraph>(cuda(), ctx_);
  auto &graph = static_cast<CudaGraph &>(*state.graph);
  Capture capture{cuda(), run, graph, on(run), name(), {}};
  for (const std::unique_ptr<DeviceRun> &device : run.resources->devices)
    if (auto *gpu = dynamic_cast<CudaRun *>(device.get()))
      for (CUstream s :
           {gpu->computeStream, gpu->copyStream, gpu->downloadStream})
        if (s != capture.origin.computeStream)
          capture.others.push_back({s, gpu->ctx});

  const std::string &entry = run.entryInfo->name;
  if (!graph.exec &&
      !capture.capture(issue, "capturing entry '" + entry + "' of plan '" +
                                  setup_.planName + "' as a CUDA graph"))
    return;
  if (capture.failed(cuda().cuCtxSetCurrent(ctx_), "cuCtxSetCurrent",
                     "entry '" + entry + "'") ||
      capture.failed(cuda().cuGraphLaunch(graph.exec, on(run).computeStream),
                     "cuGraphLaunch", "entry '" + entry + "'") ||
      capture.failed(cuda().cuStreamSynchronize(on(run).computeStream),
                     "cuStreamSynchronize",
                     "the end of the graph of entry '" + entry + "'"))
    return;
  for (modelc_task_fn task : state.hostTasks)
    if (task(run.ctx) != 0)
      return; // the task has reported why
}

} // namespace modelc::detail
