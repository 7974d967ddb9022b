#include "core/body_io.h"
#include "core/trajectory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/errors.h"

namespace murmur::core {

namespace {

constexpr const char* kStateMagic = "murmuration state 1";

[[noreturn]] void lineError(const std::string& name, size_t lineNo, const std::string& what) {
  std::ostringstream e;
  e << "--scenario " << name << ": line " << lineNo << ": " << what;
  throw UsageError(e.str());
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

bool parseWhole(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

// One "# key: value" header line (text after the '#'). Unknown keys inside a state header are
// refused so that a misspelt key does not pass as a comment.
void headerLine(const std::string& name, size_t lineNo, const std::string& text, bool inState, StateHeader& h) {
  const std::string t = trim(text);
  const size_t colon = t.find(':');
  if (t.rfind("murmuration bodies:", 0) == 0 || (inState && colon != std::string::npos)) {
    const std::string key = t.rfind("murmuration bodies:", 0) == 0 ? "bodies" : t.substr(0, colon);
    const std::string value = trim(t.substr(t.find(':') + 1));
    if (key == "bodies") {
      uint64_t n = 0;
      if (!parseWhole(value, n)) lineError(name, lineNo, "bodies: '" + value + "' is not a whole number");
      h.hasBodies = true;
      h.bodies = static_cast<size_t>(n);
    } else if (key == "force") {
      if (value != "boids" && value != "gravity") lineError(name, lineNo, "force: '" + value + "' is not boids or gravity");
      h.force = value;
    } else if (key == "half_size") {
      char* end = nullptr;
      const float v = std::strtof(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !std::isfinite(v) || !(v > 0))
        lineError(name, lineNo, "half_size: '" + value + "' is not a finite number > 0");
      h.halfSize = v;
    } else if (key == "step") {
      if (!parseWhole(value, h.step)) lineError(name, lineNo, "step: '" + value + "' is not a whole number");
    } else if (key == "params") {
      h.paramsJson = value;
    } else {
      lineError(name, lineNo, "unknown header key '" + key + "' (known: bodies, force, half_size, step, params)");
    }
  }
}

// strtof reports ERANGE for values below FLT_MIN too; those are subnormal (or zero) and what
// --out writes for them must read back. Only overflow is an error.
bool parseFloatField(const char* cur, char** end, float& x) {
  errno = 0;
  x = std::strtof(cur, end);
  if (*end == cur || !std::isfinite(x)) return false;
  return errno != ERANGE || std::fabs(x) <= FLT_MIN;
}

// The columns of a state file: mass x y z vx vy vz from pos and vel (the id is the body's line, in
// order), then species, the one optional column: written only when some body has a species other
// than 0, and read whenever a file's rows have an eighth number. A new attribute of core/bodies.h
// gets a column here (or a reason to have none) and in writeBodiesFile.
static_assert(kAttributeCount == 4, "a body attribute without a column in state files: add it to body_io.cpp");
constexpr int kRequiredColumns = 7;
constexpr int kAllColumns = 8;
constexpr const char* kColumnNames = "mass x y z vx vy vz";
constexpr const char* kAllColumnNames = "mass x y z vx vy vz species";

bool isSeparator(char c) { return c == ' ' || c == '\t' || c == '\r' || c == ','; }

// A species field: a whole number from 0 to kSpeciesCount - 1, written as an integer ("3") or as a
// float that is one ("3.0", "3e0": what a tool that writes every column as a float writes).
bool parseSpeciesField(const char* cur, const char** end, Species& s) {
  const char* e = cur;
  while (*e != '\0' && !isSeparator(*e)) ++e;
  *end = e;
  char* stop = nullptr;
  const double v = std::strtod(cur, &stop);
  if (stop != e || !std::isfinite(v) || v != std::floor(v) || v < 0 || v > kSpeciesCount - 1) return false;
  s = static_cast<Species>(v);
  return true;
}

}  // namespace

void requireRegularFile(const std::string& label, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw UsageError(label + ": cannot open (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw UsageError(label + ": is a folder, expected a file");
  if (!S_ISREG(st.st_mode)) throw UsageError(label + ": not a regular file (reading a FIFO or device could block forever)");
  if (::access(path.c_str(), R_OK) != 0) throw UsageError(label + ": cannot open (" + std::strerror(errno) + ")");
}

Bodies readBodies(std::istream& in, const std::string& name, StateHeader* header) {
  StateHeader h;
  Bodies b;
  std::string line;
  size_t lineNo = 0;
  bool inState = false, leading = true;
  int columns = 0;  // the file's, once its first row is read
  size_t firstRow = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    // Editors on some systems start UTF-8 files with a byte-order mark.
    if (lineNo == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    const size_t hash = line.find('#');
    if (hash != std::string::npos) {
      const std::string comment = line.substr(hash + 1);
      if (leading && trim(line.substr(0, hash)).empty()) {
        if (lineNo == 1 && trim(comment) == kStateMagic) inState = true;
        else headerLine(name, lineNo, comment, inState, h);
      }
      line.resize(hash);
    }
    const char* s = line.c_str();
    while (*s == ' ' || *s == '\t' || *s == '\r') ++s;
    if (*s == '\0') continue;
    leading = false;
    // The first row sets the file's column count (7, or 8 with species); every row has it.
    float v[kRequiredColumns];
    Species species = 0;
    int count = 0;
    const char* cur = s;
    while (true) {
      while (isSeparator(*cur)) ++cur;
      if (*cur == '\0') break;
      if (count == kRequiredColumns) {
        const char* endp = nullptr;
        if (!parseSpeciesField(cur, &endp, species)) {
          lineError(name, lineNo, "species '" + std::string(cur, endp).substr(0, 20) + "' is not a whole number from 0 to " +
                                      std::to_string(kSpeciesCount - 1) + " (the eighth column: " + kAllColumnNames + ")");
        }
        ++count;
        cur = endp;
        continue;
      }
      char* endp = nullptr;
      float x = 0;
      if (!parseFloatField(cur, &endp, x) || (*endp != '\0' && !isSeparator(*endp))) {
        lineError(name, lineNo, "not a finite number near '" + std::string(cur).substr(0, 20) + "' (expected: " +
                                    kColumnNames + ", then species when given)");
      }
      if (count < kRequiredColumns) v[count] = x;
      ++count;
      cur = endp;
    }
    if (columns == 0 && (count == kRequiredColumns || count == kAllColumns)) columns = count, firstRow = lineNo;
    if (count == 0 || count != columns) {  // a row of separators alone holds no number either
      if (columns == 0)
        lineError(name, lineNo, "expected " + std::to_string(kRequiredColumns) + " numbers (" + kColumnNames + ") or " +
                                    std::to_string(kAllColumns) + " (" + kAllColumnNames + "), found " + std::to_string(count));
      lineError(name, lineNo, "expected " + std::to_string(columns) + " numbers (" +
                                  (columns == kAllColumns ? kAllColumnNames : kColumnNames) + ") as on line " +
                                  std::to_string(firstRow) + ", found " + std::to_string(count));
    }
    if (v[0] < 0.0f) {
      std::ostringstream e;
      e << "mass " << v[0] << " must be >= 0";
      lineError(name, lineNo, e.str());
    }
    const uint32_t id = static_cast<uint32_t>(b.pos.size());
    b.pos.push_back(Vec4{v[1], v[2], v[3], v[0]});
    b.vel.push_back(Vec4{v[4], v[5], v[6], 0.0f});
    b.id.push_back(id);
    // Seven columns: species stays empty, species 0 throughout (withDefaults).
    if (columns == kAllColumns) b.species.push_back(species);
  }
  if (in.bad()) throw UsageError("--scenario " + name + ": read error");
  if (b.size() == 0) throw UsageError("--scenario " + name + ": no bodies (expected lines: " + kColumnNames +
                           ", then species when given)");
  if (h.hasBodies && h.bodies != b.size()) {
    throw UsageError("--scenario " + name + ": the header says " + std::to_string(h.bodies) + " bodies, the file has " +
                     std::to_string(b.size()) + " (cut short or edited?)");
  }
  if (header) *header = h;
  return b;
}

Bodies readBodiesFile(const std::string& path, StateHeader* header) {
  // A saved frame of a trajectory: PATH.h5[@last|@K] (core/trajectory.h).
  if (trajectory::isTrajectorySpec(path)) return trajectory::readFrame(path, header);
  requireRegularFile("--scenario file:" + path, path);
  std::ifstream in(path);
  if (!in) throw UsageError("--scenario file:" + path + ": cannot open (" + std::strerror(errno) + ")");
  return readBodies(in, "file:" + path, header);
}

StateHeader readStateHeader(const std::string& path) {
  if (trajectory::isTrajectorySpec(path)) return trajectory::readHeader(path);
  requireRegularFile("--scenario file:" + path, path);
  std::ifstream in(path);
  if (!in) throw UsageError("--scenario file:" + path + ": cannot open (" + std::strerror(errno) + ")");
  StateHeader h;
  std::string line;
  size_t lineNo = 0;
  bool inState = false;
  while (std::getline(in, line)) {
    ++lineNo;
    if (lineNo == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    const std::string t = trim(line);
    if (t.empty()) continue;
    if (t[0] != '#') break;
    if (lineNo == 1 && trim(t.substr(1)) == kStateMagic) inState = true;
    else headerLine("file:" + path, lineNo, t.substr(1), inState, h);
  }
  return h;
}

void writeBodiesFile(const std::string& path, const Bodies& bodies, const StateHeader& header) {
  if (!bodies.species.empty() && bodies.species.size() != bodies.size())
    throw std::logic_error("writeBodiesFile: species has another size than the bodies");
  AtomicFile f("--out", path);
  f.printf("# %s\n# bodies: %zu\n", kStateMagic, bodies.size());
  if (!header.force.empty()) f.printf("# force: %s\n", header.force.c_str());
  if (header.halfSize > 0) f.printf("# half_size: %.9g\n", header.halfSize);
  f.printf("# step: %llu\n", static_cast<unsigned long long>(header.step));
  if (!header.paramsJson.empty()) f.printf("# params: %s\n", header.paramsJson.c_str());
  // The species column only when it says something: a state of species 0 throughout is the
  // seven columns it always was.
  const bool species = std::any_of(bodies.species.begin(), bodies.species.end(), [](Species s) { return s != 0; });
  f.printf("# %s\n", species ? kAllColumnNames : kColumnNames);
  for (size_t i = 0; i < bodies.size(); ++i) {
    const Vec4& p = bodies.pos[i];
    const Vec4& v = bodies.vel[i];
    // %.9g round-trips every float exactly.
    if (species)
      f.printf("%.9g %.9g %.9g %.9g %.9g %.9g %.9g %u\n", p.w, p.x, p.y, p.z, v.x, v.y, v.z, unsigned(bodies.species[i]));
    else
      f.printf("%.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", p.w, p.x, p.y, p.z, v.x, v.y, v.z);
  }
  f.commit();
}

}  // namespace murmur::core
