// trace.cpp - modelc::Trace: the slices and flows of traced runs, and their
// Chrome trace-event JSON.
#include "trace.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

namespace modelc {

struct Trace::Impl {
  std::chrono::steady_clock::time_point origin =
      std::chrono::steady_clock::now();
  mutable std::mutex mutex;
  int runs = 0;
  std::vector<Slice> slices;
  std::vector<Flow> flows;
};

Trace::Trace() : impl_(std::make_unique<Impl>()) {}
Trace::~Trace() = default;

std::vector<Trace::Slice> Trace::slices() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->slices;
}

std::vector<Trace::Flow> Trace::flows() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->flows;
}

void Trace::clear() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->slices.clear();
  impl_->flows.clear();
}

int Trace::begin_run() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->runs++;
}

double Trace::now_us() const {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - impl_->origin)
      .count();
}

void Trace::add(std::vector<Slice> slices, std::vector<Flow> flows) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  for (Slice &s : slices)
    impl_->slices.push_back(std::move(s));
  for (Flow &f : flows)
    impl_->flows.push_back(std::move(f));
}

std::string Trace::json_string(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", v);
  return text;
}

} // namespace

std::string Trace::json() const {
  std::vector<Slice> slices = this->slices();
  std::vector<Flow> flows = this->flows();
  // One thread id per track, in the order tracks first appear (host first).
  std::map<std::string, int> tids;
  std::vector<std::string> order;
  auto tid = [&](const std::string &track) {
    auto [it, added] = tids.emplace(track, static_cast<int>(tids.size()) + 1);
    if (added)
      order.push_back(track);
    return it->second;
  };
  // Host first, then the devices' tracks by name ("cpu compute", "cpu
  // copy", "sim:0 compute", ...).
  std::set<std::string> names;
  for (const Slice &s : slices)
    names.insert(s.track);
  for (const Flow &f : flows) {
    names.insert(f.from_track);
    names.insert(f.to_track);
  }
  tid("host");
  for (const std::string &track : names)
    tid(track);
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto event = [&](const std::string &text) {
    out += (first ? "  " : ",\n  ") + text;
    first = false;
  };
  event("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": "
        "{\"name\": \"modelc\"}}");
  for (const std::string &track : order) {
    int t = tids[track];
    event("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " +
          std::to_string(t) +
          ", \"args\": {\"name\": " + Trace::json_string(track) + "}}");
    event("{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 1, "
          "\"tid\": " +
          std::to_string(t) +
          ", \"args\": {\"sort_index\": " + std::to_string(t) + "}}");
  }
  for (const Slice &s : slices) {
    std::string args = "\"run\": " + std::to_string(s.run);
    if (s.category == "copy" || s.category == "collective") {
      args += ", \"bytes\": " + std::to_string(s.bytes);
      if (s.duration_us > 0)
        args += ", \"GB/s\": " +
                number(static_cast<double>(s.bytes) / s.duration_us / 1e3);
    }
    if (s.estimate_us >= 0)
      args += ", \"estimate_us\": " + number(s.estimate_us);
    event("{\"name\": " + Trace::json_string(s.name) +
          ", \"cat\": " + Trace::json_string(s.category) +
          ", \"ph\": \"X\", \"pid\": 1, \"tid\": " +
          std::to_string(tids[s.track]) + ", \"ts\": " + number(s.start_us) +
          ", \"dur\": " + number(s.duration_us) + ", \"args\": {" + args +
          "}}");
  }
  // A flow from each record to each wait that passed it, and a marker
  // where the wait passed.
  int id = 0;
  for (const Flow &f : flows) {
    std::string name = Trace::json_string("event " + std::to_string(f.event));
    std::string common =
        "\"cat\": \"event\", \"pid\": 1, \"id\": " + std::to_string(++id) +
        ", \"args\": {\"run\": " + std::to_string(f.run) + "}";
    event("{\"name\": " + name +
          ", \"ph\": \"s\", \"tid\": " + std::to_string(tids[f.from_track]) +
          ", \"ts\": " + number(f.from_us) + ", " + common + "}");
    event("{\"name\": " + name + ", \"ph\": \"f\", \"bp\": \"e\", \"tid\": " +
          std::to_string(tids[f.to_track]) + ", \"ts\": " + number(f.to_us) +
          ", " + common + "}");
    event(
        "{\"name\": " + Trace::json_string("wait " + std::to_string(f.event)) +
        ", \"cat\": \"event\", \"ph\": \"i\", \"s\": \"t\", \"pid\": 1, "
        "\"tid\": " +
        std::to_string(tids[f.to_track]) + ", \"ts\": " + number(f.to_us) +
        "}");
  }
  out += "\n]}\n";
  return out;
}

void Trace::write(const std::string &path) const {
  std::string text = json();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file)
    throw Error("cannot write the trace to '" + path + "'");
}

namespace detail {

RunTrace::RunTrace(Trace &trace, const modelc_plan_desc &plan,
                   const std::vector<std::string> &deviceNames,
                   bool multiDevice)
    : trace(trace), plan(&plan), devices(deviceNames) {
  for (const std::string &device : deviceNames) {
    tracks.push_back(multiDevice ? device + " compute" : device);
    tracks.push_back(device + " copy");
  }
  open.assign(tracks.size(), -1.0);
}

void RunTrace::begin(const std::string &entry, const modelc_plan_desc *runPlan,
                     const std::string &regime) {
  std::lock_guard<std::mutex> lock(mutex);
  if (runPlan)
    plan = runPlan;
  run = trace.begin_run();
  slices.clear();
  records.clear();
  waits.clear();
  std::fill(open.begin(), open.end(), -1.0);
  runName = "run " + entry + (regime.empty() ? "" : " (" + regime + ")");
  runStart = trace.now_us();
}

void RunTrace::point(uint32_t point, uint32_t phase) {
  double now = trace.now_us();
  std::lock_guard<std::mutex> lock(mutex);
  const modelc_trace_point &p = plan->trace_points[point];
  std::size_t track = 2 * std::size_t(p.device);
  if (phase == MODELC_TRACE_BEGIN) {
    open[track] = now;
    return;
  }
  Trace::Slice s;
  s.name = p.what ? p.what : "op";
  s.track = tracks[track];
  s.category = "op";
  s.run = run;
  s.start_us = open[track] < 0 ? now : open[track];
  s.duration_us = now - s.start_us;
  s.estimate_us = p.estimate_us;
  slices.push_back(std::move(s));
  open[track] = -1.0;
}

void RunTrace::copy(uint32_t device, const char *what, uint64_t bytes,
                    bool end) {
  double now = trace.now_us();
  std::lock_guard<std::mutex> lock(mutex);
  std::size_t track = 2 * std::size_t(device) + 1;
  if (!end) {
    open[track] = now;
    return;
  }
  Trace::Slice s;
  s.name = what ? what : "copy";
  s.track = tracks[track];
  s.category = "copy";
  s.run = run;
  s.start_us = open[track] < 0 ? now : open[track];
  s.duration_us = now - s.start_us;
  s.bytes = bytes;
  slices.push_back(std::move(s));
  open[track] = -1.0;
}

void RunTrace::collective(uint32_t point, uint64_t bytes, bool end) {
  double now = trace.now_us();
  std::lock_guard<std::mutex> lock(mutex);
  if (!end) {
    openCollective = now;
    return;
  }
  const modelc_trace_point &p = plan->trace_points[point];
  Trace::Slice s;
  s.name = p.what ? p.what : "all-reduce";
  s.track = (p.device < devices.size() ? devices[p.device] : "host") +
            std::string(" comm");
  s.category = "collective";
  s.run = run;
  s.start_us = openCollective < 0 ? now : openCollective;
  s.duration_us = now - s.start_us;
  s.bytes = bytes;
  slices.push_back(std::move(s));
  openCollective = -1;
}

void RunTrace::event(uint32_t device, int stream, uint32_t event, bool wait) {
  double now = trace.now_us();
  std::lock_guard<std::mutex> lock(mutex);
  std::size_t track =
      2 * std::size_t(device) + (stream == MODELC_STREAM_COPY ? 1 : 0);
  (wait ? waits : records).push_back({event, track, now});
}

void RunTrace::end() {
  double now = trace.now_us();
  std::lock_guard<std::mutex> lock(mutex);
  Trace::Slice s;
  s.name = runName;
  s.track = "host";
  s.category = "run";
  s.run = run;
  s.start_us = runStart;
  s.duration_us = now - runStart;
  slices.push_back(std::move(s));
  std::vector<Trace::Flow> flows;
  for (const Mark &w : waits)
    for (const Mark &r : records)
      if (r.event == w.event)
        flows.push_back(
            {w.event, run, tracks[r.track], tracks[w.track], r.time, w.time});
  trace.add(std::move(slices), std::move(flows));
  slices.clear();
}

} // namespace detail

} // namespace modelc
