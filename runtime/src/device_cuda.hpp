// device_cuda.hpp - the "cuda:N" device: an NVIDIA GPU through the driver
// API (cuda_driver.hpp) and cuBLASLt (cublaslt.hpp), both opened at run
// time. Its host streams issue the driver calls, so host order is GPU
// order; its CUDA streams (one compute, one copy per run) run the work.
#ifndef MODELC_RUNTIME_DEVICE_CUDA_HPP
#define MODELC_RUNTIME_DEVICE_CUDA_HPP

#include "cublaslt.hpp"
#include "cuda_driver.hpp"
#include "device.hpp"
#include "plan_choice.hpp"

#include <vector>

namespace modelc::detail {

/// A GPU's share of one run: its CUDA streams, arena and cuBLASLt state.
struct CudaRun : DeviceRun {
  const CudaApi *cuda = nullptr;
  CUcontext ctx = nullptr;
  CUstream computeStream = nullptr, copyStream = nullptr;
  /// Copies to the host: they wait on the GPU for the events their host
  /// stream waited on, which must not hold up the copies to this GPU.
  CUstream downloadStream = nullptr;
  CUdeviceptr arenaMemory = 0;
  const CublasLtApi *cublasLt = nullptr; // opened on the first gemm
  GemmState gemm;                        // made on the first gemm
  CUstream cudaStream(int which) const {
    return which == MODELC_STREAM_COPY ? copyStream : computeStream;
  }
  ~CudaRun() override;
};

/// An NVIDIA GPU of the plan: its primary context, the model's GPU code
/// (loaded at set-up) and the weights resident on it (uploaded once).
class CudaDevice : public Device {
public:
  using Device::Device;
  ~CudaDevice() override;

  bool hostAddressable() const override { return false; }
  void readResident(void *host, const void *resident,
                    uint64_t bytes) const override;
  void writeResident(void *resident, const void *host,
                     uint64_t bytes) const override;
  bool supportsCapture(std::string &why) const override;
  bool providesHostMemory() const override { return true; }

  void setUp() override;
  void connect(const std::vector<Device *> &devices) override;
  std::unique_ptr<DeviceRun> allocate(uint64_t bytes,
                                      const std::string &entry) override;
  std::unique_ptr<HostMemory>
  allocateHost(uint64_t bytes, const std::string &what) const override;

  void launch(RunState &run, modelc_task_fn task) override;
  void launchKernel(RunState &run, uint32_t kernel, const uint32_t grid[3],
                    const uint32_t block[3], uint32_t sharedBytes,
                    void **args) override;
  void gemm(RunState &run, const modelc_gemm &g) override;
  void copy(RunState &run, Device &to, void *dst, Device &from, const void *src,
            uint64_t bytes, const char *what) override;
  void replicaSum(RunState &run, const ReplicaMember &m) override;
  void rankSum(RunState &run, const float *src, float *dst, int64_t count,
               const char *what) override;
  void record(RunState &run, int which, uint32_t event) override;
  void wait(RunState &run, int which, uint32_t event) override;
  void finish(RunState &run) override;
  void stamp(RunState &run, int which, std::function<void()> at) override;
  void stampInTask(RunState &run, std::function<void()> at) override;
  void synchronizeEvent(RunState &run, uint32_t event,
                        const std::string &waiter) override;
  void destroyEvent(void *native) override;
  /// graph_capture.cpp.
  void runCaptured(RunState &run, const std::function<int()> &issue) override;

  /// Makes this GPU's context current on the calling thread; throws
  /// "cuCtxSetCurrent failed on cuda:N (WHAT): ..." when it cannot.
  void makeCurrent(const std::string &what) const;
  CUcontext context() const { return ctx_; }
  /// The visible ordinal of the GPU (CUDA's, NCCL's device number).
  int physical() const { return setup_.physical; }

protected:
  const void *upload(const void *host, const modelc_weight_desc &desc) override;

private:
  const CudaApi &cuda() const { return *setup_.cuda; }
  /// The run's share of this GPU.
  CudaRun &on(RunState &run) const;
  /// Device memory; out of memory names the device, the bytes, what they
  /// are for and the plan.
  CUdeviceptr gpuAlloc(uint64_t bytes, const std::string &what) const;
  /// Waits until the copies of cuMemcpyHtoD (uploads of weights) have
  /// landed on the GPU.
  void landed(const std::string &what) const;

  CUdevice gpu_ = 0;
  CUcontext ctx_ = nullptr;
  CUmodule module_ = nullptr;       // the model's GPU code
  std::vector<CUfunction> kernels_; // per kernel name
  std::vector<CUdeviceptr> gpuWeights_;
};

/// The GPUs of this machine as plan choice sees them, probed for a model
/// with GPU plans: `cuda` is set to the driver when it opens. A model whose
/// GPU plans multiply matrices needs cuBLASLt too: without it the GPU plans
/// cannot run here (the default choice is then a host plan; asking for a
/// GPU plan says why).
MachineGpus probeMachineGpus(const modelc_model_desc &desc,
                             const CudaApi *&cuda);

} // namespace modelc::detail

#endif // MODELC_RUNTIME_DEVICE_CUDA_HPP
