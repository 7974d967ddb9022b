// Trajectories in HDF5 with an XDMF index (core/trajectory.h), through the HDF5 C API.
#include "core/trajectory.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/errors.h"

#if defined(MURMUR_HAVE_HDF5)
#include <hdf5.h>
#endif

namespace murmur::core::trajectory {

// What a frame holds of each attribute of core/bodies.h: positions and velocities per frame, the
// masses (pos.w, which never change) and ids once at the root, the species per frame. A new
// attribute gets a dataset in Writer::frame, the XDMF and readFrame (or a reason to have none).
static_assert(kAttributeCount == 4, "a body attribute without a dataset in trajectories: add it to trajectory.cpp");

namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool hasH5Extension(const std::string& path) { return endsWith(path, ".h5") || endsWith(path, ".hdf5"); }

// PATH and the frame part of PATH[@frame] ("" when none).
std::pair<std::string, std::string> splitSpec(const std::string& spec) {
  const size_t at = spec.rfind('@');
  if (at != std::string::npos && hasH5Extension(spec.substr(0, at))) return {spec.substr(0, at), spec.substr(at + 1)};
  return {spec, ""};
}

std::string baseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool isTrajectorySpec(const std::string& spec) { return hasH5Extension(splitSpec(spec).first); }

std::string xdmfPathFor(const std::string& h5Path) {
  const size_t dot = h5Path.find_last_of('.');
  return h5Path.substr(0, dot) + ".xdmf";
}

void checkTrajectoryPath(const std::string& option, const std::string& path) {
  if (!available())
    throw UsageError(option + " " + path + ": this build has no HDF5 (install libhdf5-dev and rebuild)");
  if (!hasH5Extension(path)) throw UsageError(option + " " + path + ": a trajectory is an HDF5 file (name it .h5)");
  if (baseName(path).find(':') != std::string::npos)
    throw UsageError(option + " " + path + ": the XDMF index cannot name a file with ':' in its name");
  checkWritable(option, path);
  checkWritable(option + " (its XDMF index)", xdmfPathFor(path));
}

#if defined(MURMUR_HAVE_HDF5)

bool available() { return true; }

namespace {

// HDF5 prints its own error stack by default; murmur reports one line instead. And HDF5 closes
// what is still open when the process exits, which after a failed write (a full disk) writes
// more metadata over a file we gave up on, or crashes in HDF5 1.10: the writer closes its own
// handles, or abandons them on purpose, so the library's exit handler is switched off (before
// the library's first use; later calls are harmless no-ops that fail).
void quietHdf5() {
  H5dont_atexit();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

std::string xmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string frameName(uint64_t k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "/frames/%06llu", static_cast<unsigned long long>(k));
  return buf;
}

// Closes an HDF5 handle of any kind when it goes out of scope.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t h) : h_(h) {}
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(hid_t h) {
    reset();
    h_ = h;
    return *this;
  }
  void reset() {
    if (h_ >= 0) H5Idec_ref(h_);
    h_ = -1;
  }
  // Closes and reports whether HDF5 managed to (a dataset writes its cached chunks at close).
  bool close() {
    const bool ok = h_ < 0 || H5Idec_ref(h_) >= 0;
    h_ = -1;
    return ok;
  }
  // Forgets the handle without closing it (a file given up after a failed write).
  void abandon() { h_ = -1; }
  operator hid_t() const { return h_; }
  bool ok() const { return h_ >= 0; }

 private:
  hid_t h_ = -1;
};

void writeStringAttr(hid_t loc, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR));
  Handle attr(H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
  const char* p = value.c_str();
  if (!attr.ok() || H5Awrite(attr, type, &p) < 0) throw WriteError(std::string("HDF5 attribute ") + name);
}

template <typename T>
void writeScalarAttr(hid_t loc, const char* name, hid_t type, T value) {
  Handle space(H5Screate(H5S_SCALAR));
  Handle attr(H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.ok() || H5Awrite(attr, type, &value) < 0) throw WriteError(std::string("HDF5 attribute ") + name);
}

std::string readStringAttr(hid_t loc, const char* name) {
  if (H5Aexists(loc, name) <= 0) return "";
  Handle attr(H5Aopen(loc, name, H5P_DEFAULT));
  Handle type(H5Aget_type(attr));
  if (H5Tis_variable_str(type) > 0) {
    Handle mem(H5Tcopy(type));  // the file's character set: HDF5 does not convert UTF-8 to ASCII
    char* p = nullptr;
    if (H5Aread(attr, mem, &p) < 0 || !p) return "";
    std::string s(p);
    H5free_memory(p);
    return s;
  }
  std::string s(H5Tget_size(type), '\0');
  Handle mem(H5Tcopy(type));
  if (H5Aread(attr, mem, s.data()) < 0) return "";
  return s.substr(0, s.find('\0'));
}

template <typename T>
bool readScalarAttr(hid_t loc, const char* name, hid_t memType, T& out) {
  if (H5Aexists(loc, name) <= 0) return false;
  Handle attr(H5Aopen(loc, name, H5P_DEFAULT));
  return H5Aread(attr, memType, &out) >= 0;
}

// A chunked dataset of rows of `cols` values (cols 0: one value per row) that grows by one row.
hid_t createGrowing(hid_t file, const char* name, hid_t type, hsize_t cols, hsize_t chunkRows) {
  const int rank = cols ? 2 : 1;
  const hsize_t dims[2] = {0, cols}, maxDims[2] = {H5S_UNLIMITED, cols}, chunk[2] = {chunkRows, cols};
  Handle space(H5Screate_simple(rank, dims, maxDims));
  Handle props(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(props, rank, chunk);
  return H5Dcreate2(file, name, type, space, H5P_DEFAULT, props, H5P_DEFAULT);
}

bool appendRow(hid_t dset, hid_t memType, const void* row, hsize_t cols) {
  const int rank = cols ? 2 : 1;
  Handle space(H5Dget_space(dset));
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  const hsize_t grown[2] = {dims[0] + 1, cols};
  if (H5Dset_extent(dset, grown) < 0) return false;
  Handle fs(H5Dget_space(dset));
  const hsize_t start[2] = {dims[0], 0}, count[2] = {1, cols ? cols : 1};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  Handle ms(H5Screate_simple(rank, count, nullptr));
  return H5Dwrite(dset, memType, ms, fs, H5P_DEFAULT, row) >= 0;
}

// A whole (n) or (n, 3) dataset, chunked by up to 64k rows.
bool writeArray(hid_t loc, const char* name, hid_t fileType, hid_t memType, const void* data, hsize_t n, hsize_t cols) {
  const int rank = cols ? 2 : 1;
  const hsize_t dims[2] = {n, cols}, chunk[2] = {n < 65536 ? n : 65536, cols};
  Handle space(H5Screate_simple(rank, dims, nullptr));
  Handle props(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(props, rank, chunk);
  Handle d(H5Dcreate2(loc, name, fileType, space, H5P_DEFAULT, props, H5P_DEFAULT));
  if (!d.ok() || H5Dwrite(d, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) return false;
  return d.close();
}

hsize_t lengthOf(hid_t file, const char* name) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return 0;
  Handle d(H5Dopen2(file, name, H5P_DEFAULT));
  Handle s(H5Dget_space(d));
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_dims(s, dims, nullptr) < 0) return 0;
  return dims[0];
}

}  // namespace

struct Writer::Impl {
  std::string option, path, xdmfPath, h5Name;
  Handle file, step, time, obs;
  size_t n = 0;
  uint64_t frames = 0;
  std::vector<std::string> obsColumns;
  std::vector<double> frameTimes;
  bool failed = false;

  ~Impl() {
    // After a failed write the file is left as the last successful flush left it: closing it
    // would flush again over it.
    if (failed) {
      for (Handle* h : {&obs, &time, &step, &file}) h->abandon();
    }
  }

  [[noreturn]] void fail(const std::string& what) {
    failed = true;
    throw WriteError(option + " " + path + ": " + what + " failed" + (errno ? std::string(" (") + std::strerror(errno) + ")" : ""));
  }

  void flush() {
    if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) fail("flushing the file");
  }
  void requireUsable() const {
    if (failed) throw WriteError(option + " " + path + ": an earlier write failed");
  }

  // The index of every complete frame, replaced atomically.
  void writeXdmf() const {
    std::ostringstream x;
    const std::string f = xmlEscape(h5Name);
    x << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
      << "  <Grid Name=\"trajectory\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (uint64_t k = 0; k < frames; ++k) {
      const std::string g = frameName(k);
      char t[64];
      std::snprintf(t, sizeof t, "%.17g", frameTimes[k]);
      x << "   <Grid Name=\"frame " << k << "\" GridType=\"Uniform\">\n"
        << "    <Time Value=\"" << t << "\"/>\n"
        << "    <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << n << "\" NodesPerElement=\"1\">\n"
        << "     <DataItem Dimensions=\"" << n << " 1\" NumberType=\"UInt\" Precision=\"4\" Format=\"HDF\">" << f
        << ":/connectivity</DataItem>\n"
        << "    </Topology>\n"
        << "    <Geometry GeometryType=\"XYZ\">\n"
        << "     <DataItem Dimensions=\"" << n << " 3\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">" << f << ":"
        << g << "/positions</DataItem>\n"
        << "    </Geometry>\n"
        << "    <Attribute Name=\"Velocity\" AttributeType=\"Vector\" Center=\"Node\">\n"
        << "     <DataItem Dimensions=\"" << n << " 3\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">" << f << ":"
        << g << "/velocities</DataItem>\n"
        << "    </Attribute>\n"
        << "    <Attribute Name=\"id\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        << "     <DataItem Dimensions=\"" << n << "\" NumberType=\"UInt\" Precision=\"4\" Format=\"HDF\">" << f
        << ":/ids</DataItem>\n"
        << "    </Attribute>\n"
        << "    <Attribute Name=\"mass\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        << "     <DataItem Dimensions=\"" << n << "\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">" << f
        << ":/masses</DataItem>\n"
        << "    </Attribute>\n"
        << "    <Attribute Name=\"species\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        << "     <DataItem Dimensions=\"" << n << "\" NumberType=\"UChar\" Precision=\"1\" Format=\"HDF\">" << f << ":"
        << g << "/species</DataItem>\n"
        << "    </Attribute>\n"
        << "   </Grid>\n";
    }
    x << "  </Grid>\n </Domain>\n</Xdmf>\n";
    writeFileAtomically(option + " (its XDMF index)", xdmfPath, x.str());
  }
};

Writer::Writer(const std::string& option, const std::string& path, const Meta& meta) : impl_(std::make_unique<Impl>()) {
  quietHdf5();
  Impl& w = *impl_;
  w.option = option, w.path = path, w.xdmfPath = xdmfPathFor(path), w.h5Name = baseName(path);
  w.file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (!w.file.ok()) throw UsageError(option + " " + path + ": cannot create the HDF5 file");
  writeScalarAttr<int>(w.file, "murmuration_trajectory", H5T_NATIVE_INT, 1);
  writeStringAttr(w.file, "force", meta.force);
  writeScalarAttr<float>(w.file, "half_size", H5T_NATIVE_FLOAT, meta.halfSize);
  writeStringAttr(w.file, "params", meta.paramsJson);
  Handle frames(H5Gcreate2(w.file, "frames", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  w.step = createGrowing(w.file, "step", H5T_STD_U64LE, 0, 256);
  w.time = createGrowing(w.file, "time", H5T_IEEE_F64LE, 0, 256);
  if (!frames.ok() || !w.step.ok() || !w.time.ok()) w.fail("creating the datasets");
  w.flush();
  w.writeXdmf();
}

Writer::~Writer() = default;

uint64_t Writer::frames() const { return impl_->frames; }

void Writer::frame(const Bodies& b, uint64_t step, double time) {
  Impl& w = *impl_;
  w.requireUsable();
  const size_t n = b.size();
  if (!b.species.empty() && b.species.size() != n)
    throw std::logic_error("trajectory: species has another size than the bodies");
  errno = 0;  // a failed write's reason, when the system gives one
  if (w.frames == 0) {
    w.n = n;
    std::vector<float> mass(n);
    for (size_t i = 0; i < n; ++i) mass[i] = b.pos[i].w;
    writeScalarAttr<uint64_t>(w.file, "bodies", H5T_NATIVE_UINT64, n);
    // The Polyvertex topology's connectivity: point i is vertex i (some XDMF readers need it
    // spelled out).
    std::vector<uint32_t> vertex(n);
    for (size_t i = 0; i < n; ++i) vertex[i] = static_cast<uint32_t>(i);
    if (!writeArray(w.file, "ids", H5T_STD_U32LE, H5T_NATIVE_UINT32, b.id.data(), n, 0) ||
        !writeArray(w.file, "connectivity", H5T_STD_U32LE, H5T_NATIVE_UINT32, vertex.data(), n, 1) ||
        !writeArray(w.file, "masses", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, mass.data(), n, 0))
      w.fail("writing ids and masses");
  } else if (n != w.n) {
    throw std::logic_error("trajectory: the number of bodies changed during the run");
  }
  std::vector<float> xyz(3 * n);
  const std::string g = frameName(w.frames);
  Handle group(H5Gcreate2(w.file, g.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!group.ok()) w.fail("creating " + g);
  // Species first: a frame whose velocities open (frameReadable) then holds its species too. An
  // empty species array is species 0 throughout (withDefaults).
  std::vector<Species> zeros;
  if (b.species.empty()) zeros.assign(n, Species{0});
  const Species* species = b.species.empty() ? zeros.data() : b.species.data();
  if (!writeArray(group, "species", H5T_STD_U8LE, H5T_NATIVE_UINT8, species, n, 0)) w.fail("writing species");
  for (size_t i = 0; i < n; ++i) xyz[3 * i] = b.pos[i].x, xyz[3 * i + 1] = b.pos[i].y, xyz[3 * i + 2] = b.pos[i].z;
  if (!writeArray(group, "positions", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, xyz.data(), n, 3)) w.fail("writing positions");
  for (size_t i = 0; i < n; ++i) xyz[3 * i] = b.vel[i].x, xyz[3 * i + 1] = b.vel[i].y, xyz[3 * i + 2] = b.vel[i].z;
  if (!writeArray(group, "velocities", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, xyz.data(), n, 3)) w.fail("writing velocities");
  try {
    writeScalarAttr<uint64_t>(group, "step", H5T_NATIVE_UINT64, step);
    writeScalarAttr<double>(group, "time", H5T_NATIVE_DOUBLE, time);
  } catch (const WriteError&) {
    w.fail("writing the frame's step and time");
  }
  if (!group.close()) w.fail("closing " + g);
  // Two flushes: the frame on disk first, then the index that counts it. A write that fails in
  // the first leaves /step as it was; one that fails in the second leaves a complete frame.
  w.flush();
  if (!appendRow(w.step, H5T_NATIVE_UINT64, &step, 0) || !appendRow(w.time, H5T_NATIVE_DOUBLE, &time, 0))
    w.fail("writing the frame index");
  w.flush();
  ++w.frames;
  w.frameTimes.push_back(time);
  w.writeXdmf();
}

void Writer::observables(const std::vector<std::string>& columns, const std::vector<double>& row) {
  Impl& w = *impl_;
  w.requireUsable();
  if (!w.obs.ok()) {
    w.obsColumns = columns;
    w.obs = createGrowing(w.file, "observables", H5T_IEEE_F64LE, columns.size(), 64);
    std::string joined;
    for (const std::string& c : columns) joined += (joined.empty() ? "" : ",") + c;
    if (!w.obs.ok()) w.fail("creating /observables");
    writeStringAttr(w.obs, "columns", joined);
  }
  if (!appendRow(w.obs, H5T_NATIVE_DOUBLE, row.data(), w.obsColumns.size())) w.fail("writing /observables");
  w.flush();
}

namespace {

struct OpenFrame {
  Handle file;
  std::string path;
  uint64_t index = 0, frames = 0;
};

// True when frame k's group and both arrays open (their shapes are checked when read).
bool frameReadable(hid_t file, uint64_t k) {
  const std::string g = frameName(k);
  if (H5Lexists(file, "frames", H5P_DEFAULT) <= 0 || H5Lexists(file, g.c_str(), H5P_DEFAULT) <= 0) return false;
  Handle group(H5Gopen2(file, g.c_str(), H5P_DEFAULT));
  if (!group.ok()) return false;
  Handle p(H5Dopen2(group, "positions", H5P_DEFAULT)), v(H5Dopen2(group, "velocities", H5P_DEFAULT));
  return p.ok() && v.ok();
}

void openFrame(const std::string& spec, OpenFrame& o) {
  quietHdf5();
  const auto [path, frame] = splitSpec(spec);
  o.path = path;
  const std::string name = "file:" + spec;
  requireRegularFile("--scenario " + name, path);
  o.file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (!o.file.ok()) throw UsageError("--scenario " + name + ": not a readable HDF5 file");
  o.frames = lengthOf(o.file, "/step");
  if (o.frames == 0) throw UsageError("--scenario " + name + ": the trajectory holds no complete frame");
  if (frame.empty() || frame == "last") {
    // The last frame that reads whole: a write that failed on a full disk may leave the index one
    // frame ahead of what the file holds.
    o.index = o.frames;
    while (o.index > 0 && !frameReadable(o.file, o.index - 1)) --o.index;
    if (o.index == 0) throw UsageError("--scenario " + name + ": no frame of the trajectory is readable");
    --o.index;
  } else {
    char* end = nullptr;
    errno = 0;
    const unsigned long long k = std::strtoull(frame.c_str(), &end, 10);
    if (frame[0] == '-' || *end != '\0' || errno != 0 || k >= o.frames)
      throw UsageError("--scenario " + name + ": the frame is @last or @K with K from 0 to " +
                       std::to_string(o.frames - 1) + " (the file holds " + std::to_string(o.frames) + " frames)");
    o.index = k;
  }
}

StateHeader headerOf(const OpenFrame& o) {
  StateHeader h;
  h.force = readStringAttr(o.file, "force");
  h.paramsJson = readStringAttr(o.file, "params");
  readScalarAttr(o.file, "half_size", H5T_NATIVE_FLOAT, h.halfSize);
  uint64_t bodies = 0;
  h.hasBodies = readScalarAttr(o.file, "bodies", H5T_NATIVE_UINT64, bodies);
  h.bodies = bodies;
  Handle g(H5Gopen2(o.file, frameName(o.index).c_str(), H5P_DEFAULT));
  if (g.ok()) readScalarAttr(g, "step", H5T_NATIVE_UINT64, h.step);
  return h;
}

template <typename T>
std::vector<T> readArray(hid_t loc, const char* name, hid_t memType, size_t values, const std::string& what) {
  Handle d(H5Dopen2(loc, name, H5P_DEFAULT));
  std::vector<T> out(values);
  if (!d.ok()) throw UsageError(what + ": " + name + " is missing");
  Handle s(H5Dget_space(d));
  if (size_t(H5Sget_simple_extent_npoints(s)) != values) throw UsageError(what + ": " + name + " has the wrong shape");
  if (H5Dread(d, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) throw UsageError(what + ": reading " + name + " failed");
  return out;
}

}  // namespace

StateHeader readHeader(const std::string& spec) {
  OpenFrame o;
  openFrame(spec, o);
  return headerOf(o);
}

Bodies readFrame(const std::string& spec, StateHeader* header) {
  OpenFrame o;
  openFrame(spec, o);
  const StateHeader h = headerOf(o);
  if (header) *header = h;
  const std::string what = "--scenario file:" + spec;
  const size_t n = h.bodies;
  if (!h.hasBodies || n == 0) throw UsageError(what + ": the file does not say how many bodies it holds");
  Handle g(H5Gopen2(o.file, frameName(o.index).c_str(), H5P_DEFAULT));
  if (!g.ok()) throw UsageError(what + ": frame " + std::to_string(o.index) + " is missing");
  const std::vector<float> p = readArray<float>(g, "positions", H5T_NATIVE_FLOAT, 3 * n, what);
  const std::vector<float> v = readArray<float>(g, "velocities", H5T_NATIVE_FLOAT, 3 * n, what);
  const std::vector<float> m = readArray<float>(o.file, "masses", H5T_NATIVE_FLOAT, n, what);
  const std::vector<uint32_t> ids = readArray<uint32_t>(o.file, "ids", H5T_NATIVE_UINT32, n, what);
  Bodies b;
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    b.pos[i] = Vec4{p[3 * i], p[3 * i + 1], p[3 * i + 2], m[i]};
    b.vel[i] = Vec4{v[3 * i], v[3 * i + 1], v[3 * i + 2], 0};
    b.id[i] = ids[i];
  }
  // Trajectories written before bodies had a species have no such dataset: species 0 throughout.
  if (H5Lexists(g, "species", H5P_DEFAULT) > 0)
    b.species = readArray<Species>(g, "species", H5T_NATIVE_UINT8, n, what);
  else
    b.species.clear();
  const std::string bad = checkBodies(b);
  if (!bad.empty()) throw UsageError(what + ": " + bad);
  return b;
}

#else  // without HDF5

bool available() { return false; }

namespace {
[[noreturn]] void noHdf5(const std::string& what) {
  throw UsageError(what + ": this build has no HDF5, so no trajectories (install libhdf5-dev and rebuild)");
}
}  // namespace

struct Writer::Impl {};
Writer::Writer(const std::string& option, const std::string& path, const Meta&) { noHdf5(option + " " + path); }
Writer::~Writer() = default;
void Writer::frame(const Bodies&, uint64_t, double) {}
void Writer::observables(const std::vector<std::string>&, const std::vector<double>&) {}
uint64_t Writer::frames() const { return 0; }
StateHeader readHeader(const std::string& spec) { noHdf5("--scenario file:" + spec); }
Bodies readFrame(const std::string& spec, StateHeader*) { noHdf5("--scenario file:" + spec); }

#endif

}  // namespace murmur::core::trajectory
