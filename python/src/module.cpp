// module.cpp - modelc._core, the C++ half of the `modelc` Python module: a
// thin pybind11 layer over the runtime's C++ API (docs/python.md). The
// Python half (python/modelc/) parses run()'s arguments and drives the
// compiler.
#include "tensors.hpp"

#include "modelc/runtime.hpp"

#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>

namespace py = pybind11;
using modelc::python::Input;

namespace {

/// What the last run on this thread did at the runtime's boundary, for the
/// tests (through _last_run()): the data pointers of the Tensors given to
/// Model::run and returned by it (zero-copy), whether an input was copied,
/// and when Model::run started and returned, on the steady clock, in ns,
/// measured without the GIL (so two threads' runs overlap only if the GIL
/// was released).
struct RunRecord {
  std::vector<uintptr_t> inputs;
  std::vector<uintptr_t> outputs;
  std::vector<bool> copied;
  int64_t started_ns = 0;
  int64_t finished_ns = 0;
};
thread_local RunRecord lastRun;

int64_t steadyNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

py::list describeTensors(const std::vector<modelc::TensorInfo> &tensors) {
  py::list list;
  for (const modelc::TensorInfo &t : tensors) {
    // A dynamic axis by its dimension's name (as ONNX's dim_param).
    py::list shape;
    for (std::size_t a = 0; a < t.shape.size(); ++a)
      if (!t.dims.empty() && !t.dims[a].empty())
        shape.append(t.dims[a]);
      else
        shape.append(t.shape[a]);
    list.append(py::make_tuple(t.name, modelc::python::numpyName(t.dtype),
                               py::tuple(shape)));
  }
  return list;
}

/// A loaded model, the path it came from, and its trace (or null).
struct PyModel {
  modelc::Model model;
  std::string path;
  std::shared_ptr<modelc::Trace> trace;
};

PyModel load(const std::string &path, const std::string &plan, int threads,
             const std::string &weights, bool trace,
             const std::string &distributed, double collectiveTimeout) {
  modelc::LoadOptions options;
  options.distributed = distributed;
  options.collective_timeout_s = collectiveTimeout;
  options.plan = plan;
  options.num_threads = threads;
  options.weights = weights;
  if (trace)
    options.trace = std::make_shared<modelc::Trace>();
  std::shared_ptr<modelc::Trace> traced = options.trace;
  py::gil_scoped_release release;
  return PyModel{modelc::Model::load(path, options), path, traced};
}

/// The trace of a model loaded with trace=True; an Error otherwise.
modelc::Trace &traceOf(const PyModel &self) {
  if (!self.trace)
    throw modelc::Error("model " + self.path +
                        " is not traced: load it with trace=True");
  return *self.trace;
}

/// The inputs of a run of `entry` on `values` (in the entry's input
/// order; None for an input left to its default): `borrowed` keeps what
/// the Tensors borrow alive. Checks first that numpy can take the outputs.
std::vector<modelc::Tensor> runInputs(const PyModel &self,
                                      const std::string &entry,
                                      const py::sequence &values, bool dlpack,
                                      std::vector<Input> &borrowed) {
  const modelc::EntryInfo &info = self.model.entry(entry);
  if (values.size() != info.inputs.size())
    throw modelc::Error("entry point '" + entry + "' takes " +
                        std::to_string(info.inputs.size()) + " inputs, got " +
                        std::to_string(values.size()));
  // Before the run, not after it: the one check that toNumpy gets no bf16.
  if (!dlpack)
    for (const modelc::TensorInfo &output : info.outputs)
      if (output.dtype == modelc::DType::BF16)
        throw modelc::Error("output '" + output.name +
                            "' is bf16, which numpy has no dtype for; run "
                            "with out=\"dlpack\" to get a torch.bfloat16 "
                            "tensor");
  std::vector<modelc::Tensor> tensors;
  borrowed.reserve(info.inputs.size());
  tensors.reserve(info.inputs.size());
  for (std::size_t i = 0; i < info.inputs.size(); ++i) {
    if (values[i].is_none() && info.inputs[i].has_default()) {
      tensors.push_back(info.inputs[i].default_value);
      continue;
    }
    borrowed.push_back(modelc::python::borrowInput(values[i], info.inputs[i]));
    tensors.push_back(borrowed.back().tensor);
  }
  return tensors;
}

/// A run's outputs as numpy arrays, or (dlpack) as DLPack capsules, bool
/// outputs as numpy arrays (PyTorch 1.13 reads no DLPack bool).
py::list runOutputs(std::vector<modelc::Tensor> outputs, bool dlpack) {
  py::list results;
  for (modelc::Tensor &output : outputs) {
    bool asDlpack = dlpack && output.dtype() != modelc::DType::Bool;
    results.append(asDlpack ? modelc::python::toDlpack(std::move(output))
                            : modelc::python::toNumpy(std::move(output)));
  }
  return results;
}

/// Runs `entry` on `values` and returns the outputs (runOutputs).
py::list run(const PyModel &self, const std::string &entry,
             const py::sequence &values, bool dlpack) {
  std::vector<Input> inputs;
  std::vector<modelc::Tensor> tensors =
      runInputs(self, entry, values, dlpack, inputs);
  std::vector<modelc::Tensor> outputs;
  int64_t started, finished;
  {
    py::gil_scoped_release release;
    started = steadyNanoseconds();
    outputs = self.model.run(entry, tensors);
    finished = steadyNanoseconds();
  }
  lastRun = RunRecord();
  lastRun.started_ns = started;
  lastRun.finished_ns = finished;
  for (const Input &input : inputs) {
    lastRun.inputs.push_back(reinterpret_cast<uintptr_t>(input.tensor.data()));
    lastRun.copied.push_back(input.copied);
  }
  for (const modelc::Tensor &output : outputs)
    lastRun.outputs.push_back(reinterpret_cast<uintptr_t>(output.data()));
  return runOutputs(std::move(outputs), dlpack);
}

/// The size regime (an index into Model.regimes) a run of `entry` on
/// `values` takes; -1 without regimes.
int regimeOf(const PyModel &self, const std::string &entry,
             const py::sequence &values) {
  std::vector<Input> inputs;
  std::vector<modelc::Tensor> tensors =
      runInputs(self, entry, values, false, inputs);
  return self.model.regime_of(entry, tensors);
}

/// A run started by Model.run_async, and how to hand its outputs over.
struct PyPendingRun {
  modelc::PendingRun pending;
  bool dlpack = false;
};

/// Starts `entry` on `values` (Model::run_async: the inputs are copied
/// before this returns).
PyPendingRun runAsync(const PyModel &self, const std::string &entry,
                      const py::sequence &values, bool dlpack) {
  std::vector<Input> inputs;
  std::vector<modelc::Tensor> tensors =
      runInputs(self, entry, values, dlpack, inputs);
  py::gil_scoped_release release;
  return PyPendingRun{self.model.run_async(entry, tensors), dlpack};
}

/// Model.entries: per entry point its name, inputs, outputs and the inputs
/// a run may leave out.
py::list describeEntries(const PyModel &self) {
  py::list entries;
  for (const modelc::EntryInfo &e : self.model.entries()) {
    py::list optional;
    for (const modelc::TensorInfo &input : e.inputs)
      if (input.has_default())
        optional.append(input.name);
    entries.append(py::make_tuple(e.name, describeTensors(e.inputs),
                                  describeTensors(e.outputs), optional));
  }
  return entries;
}

/// Model.dims: {name: {"min", "max", "opt"}}.
py::dict describeDims(const PyModel &self) {
  py::dict dims;
  for (const modelc::DimInfo &d : self.model.dims()) {
    py::dict range;
    range["min"] = d.min;
    range["max"] = d.max;
    range["opt"] = d.opt;
    dims[py::str(d.name)] = range;
  }
  return dims;
}

/// Model.regimes: [{"dim", "min", "max"}] of the chosen plan.
py::list describeRegimes(const PyModel &self) {
  py::list regimes;
  for (const modelc::RegimeInfo &r : self.model.regimes()) {
    py::dict regime;
    regime["dim"] = r.dim;
    regime["min"] = r.min;
    regime["max"] = r.max;
    regimes.append(regime);
  }
  return regimes;
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "modelc's runtime, for Python: load and run a compiled model.so "
            "(use the modelc package, not this module)";
  py::register_exception<modelc::Error>(m, "Error", PyExc_RuntimeError);

  py::class_<PyModel>(m, "Model")
      .def_readonly("path", &PyModel::path)
      .def("entries", &describeEntries)
      .def("entry",
           [](const PyModel &self, const std::string &name) {
             const modelc::EntryInfo &e = self.model.entry(name);
             return py::make_tuple(e.name, describeTensors(e.inputs),
                                   describeTensors(e.outputs));
           })
      .def("plan", [](const PyModel &self) { return self.model.plan(); })
      .def("rank", [](const PyModel &self) { return self.model.rank(); })
      .def("world_size",
           [](const PyModel &self) { return self.model.world_size(); })
      .def("plans", [](const PyModel &self) { return self.model.plans(); })
      .def("plan_note",
           [](const PyModel &self) { return self.model.plan_note(); })
      .def("replica_sums",
           [](const PyModel &self) { return self.model.replica_sums(); })
      .def("rank_sums",
           [](const PyModel &self) { return self.model.rank_sums(); })
      .def("state_shards",
           [](const PyModel &self) { return self.model.state_shards(); })
      .def("dims", &describeDims)
      .def("regimes", &describeRegimes)
      .def("compiler_version",
           [](const PyModel &self) { return self.model.compiler_version(); })
      .def("compiler_flags",
           [](const PyModel &self) { return self.model.compiler_flags(); })
      .def("num_threads",
           [](const PyModel &self) { return self.model.num_threads(); })
      .def("gpu_kernels",
           [](const PyModel &self) { return self.model.gpu_kernels(); })
      .def("weight_names",
           [](const PyModel &self) { return self.model.weight_names(); })
      .def("arena_bytes",
           [](const PyModel &self, const std::string &entry) {
             return self.model.arena_bytes(entry);
           })
      .def("run", &run, py::arg("entry"), py::arg("inputs"), py::arg("dlpack"))
      .def("regime_of", &regimeOf, py::arg("entry"), py::arg("inputs"))
      .def("run_async", &runAsync, py::arg("entry"), py::arg("inputs"),
           py::arg("dlpack"))
      .def("trains", [](const PyModel &self) { return self.model.trains(); })
      .def("compute_precision",
           [](const PyModel &self) { return self.model.compute_precision(); })
      .def("save_weights",
           [](const PyModel &self, const std::string &path) {
             py::gil_scoped_release release;
             self.model.save_weights(path);
           })
      .def("load_weights",
           [](PyModel &self, const std::string &path) {
             py::gil_scoped_release release;
             self.model.load_weights(path);
           })
      .def("weight_copy",
           [](const PyModel &self, const std::string &name) {
             // A copy: a training step changes the weight in place.
             modelc::Tensor view = self.model.weight(name);
             return modelc::python::toNumpy(modelc::Tensor::copy_of(
                 view.data(), view.shape(), view.dtype()));
           })
      .def("trace_slices",
           [](const PyModel &self) {
             py::list slices;
             for (const modelc::Trace::Slice &s : traceOf(self).slices()) {
               py::dict d;
               d["name"] = s.name;
               d["track"] = s.track;
               d["category"] = s.category;
               d["run"] = s.run;
               d["start_us"] = s.start_us;
               d["duration_us"] = s.duration_us;
               d["bytes"] = s.bytes;
               d["estimate_us"] = s.estimate_us >= 0
                                      ? py::object(py::float_(s.estimate_us))
                                      : py::object(py::none());
               slices.append(d);
             }
             return slices;
           })
      .def("trace_json",
           [](const PyModel &self) { return traceOf(self).json(); })
      .def("write_trace",
           [](const PyModel &self, const std::string &path) {
             traceOf(self).write(path);
           })
      .def("clear_trace", [](const PyModel &self) { traceOf(self).clear(); });

  py::class_<PyPendingRun>(m, "PendingRun")
      .def("ready",
           [](const PyPendingRun &self) { return self.pending.ready(); })
      .def("wait", [](PyPendingRun &self) {
        std::vector<modelc::Tensor> outputs;
        {
          py::gil_scoped_release release;
          outputs = self.pending.wait();
        }
        return runOutputs(std::move(outputs), self.dlpack);
      });

  m.def(
      "abort_distributed_run",
      [](int code) {
        py::gil_scoped_release release;
        modelc::abort_distributed_run(code);
      },
      py::arg("exit_code"));
  m.def("load", &load, py::arg("path"), py::arg("plan"), py::arg("threads"),
        py::arg("weights"), py::arg("trace"), py::arg("distributed"),
        py::arg("collective_timeout"));
  m.def("_exported_alive", &modelc::python::exportedTensorsAlive);
  m.def("_last_run", [] {
    py::dict record;
    record["inputs"] = lastRun.inputs;
    record["outputs"] = lastRun.outputs;
    record["copied"] = lastRun.copied;
    record["started_ns"] = lastRun.started_ns;
    record["finished_ns"] = lastRun.finished_ns;
    return record;
  });
}
