// comm.cpp - loading the communication backend plugin and calling it.
#include "comm.hpp"

#include "modelc/runtime.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace modelc::detail {

namespace {

std::vector<std::string> pluginCandidates(const std::string &backend) {
  std::string file = "libmodelc_comm_" + backend + ".so";
  std::vector<std::string> paths;
  if (const char *path = std::getenv("MODELC_COMM_PLUGIN"); path && *path)
    paths.push_back(path);
#ifdef MODELC_PLUGIN_BUILD_DIR
  paths.push_back(std::string(MODELC_PLUGIN_BUILD_DIR) + "/" + file);
#endif
#ifdef MODELC_PLUGIN_INSTALL_DIR
  paths.push_back(std::string(MODELC_PLUGIN_INSTALL_DIR) + "/" + file);
#endif
  paths.push_back(file);
  return paths;
}

std::mutex joinMutex;
// The process's communicator: kept from the first join to exit, when it is
// closed (MPI_Finalize) unless a collective failed.
std::shared_ptr<Communicator> joined;

} // namespace

std::shared_ptr<Communicator> Communicator::join(const std::string &backend) {
  std::lock_guard<std::mutex> lock(joinMutex);
  if (std::shared_ptr<Communicator> existing = joined) {
    if (existing->backend_ != backend)
      throw Error("distributed run: this process already joined one through '" +
                  existing->backend_ + "', not '" + backend + "'");
    return existing;
  }
  if (backend != "mpi")
    throw Error("distributed run: unknown backend '" + backend +
                "' (expected mpi)");
  std::shared_ptr<Communicator> comm(new Communicator());
  comm->backend_ = backend;
  std::string tried;
  for (const std::string &path : pluginCandidates(backend)) {
    comm->library_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (comm->library_)
      break;
    const char *why = ::dlerror();
    tried += "\n  " + path + ": " + (why ? why : "not found");
  }
  if (!comm->library_)
    throw Error("distributed run: cannot load the '" + backend +
                "' backend plugin (libmodelc_comm_" + backend +
                ".so; built when CMake finds MPI: apt install "
                "libopenmpi-dev openmpi-bin, or set MODELC_COMM_PLUGIN):" +
                tried);
  auto entry = reinterpret_cast<modelc_comm_plugin_fn>(
      ::dlsym(comm->library_, MODELC_COMM_PLUGIN_SYMBOL));
  comm->plugin_ = entry ? entry() : nullptr;
  if (!comm->plugin_ || comm->plugin_->version != MODELC_COMM_PLUGIN_VERSION)
    throw Error("distributed run: the '" + backend +
                "' plugin is not a modelc communication plugin of version " +
                std::to_string(MODELC_COMM_PLUGIN_VERSION));
  char error[512] = "";
  comm->comm_ = comm->plugin_->open(error, sizeof error);
  if (!comm->comm_)
    throw Error(std::string("distributed run: cannot join through '") +
                backend + "': " + error);
  comm->rank_ = comm->plugin_->rank(comm->comm_);
  comm->size_ = comm->plugin_->size(comm->comm_);
  joined = comm;
  std::atexit([] {
    std::lock_guard<std::mutex> lock(joinMutex);
    joined.reset();
  });
  return comm;
}

Communicator::~Communicator() {
  if (plugin_ && comm_ && !failed_)
    plugin_->close(comm_);
  // The library stays loaded: MPI does not support being unloaded.
}

bool Communicator::allReduce(const float *src, float *dst, int64_t count,
                             double timeoutSeconds, std::string &error) {
  char text[512] = "";
  if (plugin_->all_reduce_f32(comm_, src, dst, count, timeoutSeconds, text,
                              sizeof text) == 0)
    return true;
  error = text;
  failed_ = true;
  return false;
}

bool Communicator::broadcast(void *data, int64_t bytes, double timeoutSeconds,
                             std::string &error) {
  char text[512] = "";
  if (plugin_->broadcast(comm_, data, bytes, timeoutSeconds, text,
                         sizeof text) == 0)
    return true;
  error = text;
  failed_ = true;
  return false;
}

std::shared_ptr<Communicator> Communicator::current() {
  std::lock_guard<std::mutex> lock(joinMutex);
  return joined;
}

void Communicator::abort(int code) {
  plugin_->abort(comm_, code);
  std::_Exit(code);
}

} // namespace modelc::detail

void modelc::abort_distributed_run(int exit_code) {
  if (std::shared_ptr<detail::Communicator> comm =
          detail::Communicator::current();
      comm && comm->size() > 1)
    comm->abort(exit_code);
}
