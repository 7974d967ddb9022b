#include "core/body_io.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/errors.h"

namespace murmur::core {

Bodies readBodiesFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw UsageError("--scenario file:" + path + ": cannot open (" + std::strerror(errno) + ")");
  }
  Bodies b;
  std::string line;
  size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const char* s = line.c_str();
    while (*s == ' ' || *s == '\t' || *s == '\r') ++s;
    if (*s == '\0') continue;
    float v[7];
    int count = 0;
    const char* cur = s;
    while (true) {
      while (*cur == ' ' || *cur == '\t' || *cur == '\r' || *cur == ',') ++cur;
      if (*cur == '\0') break;
      char* endp = nullptr;
      errno = 0;
      const float x = std::strtof(cur, &endp);
      if (endp == cur || errno == ERANGE || !std::isfinite(x) ||
          (*endp != '\0' && *endp != ' ' && *endp != '\t' && *endp != '\r' && *endp != ',')) {
        std::ostringstream e;
        e << "--scenario file:" << path << ": line " << lineNo
          << ": not a finite number near '" << std::string(cur).substr(0, 20)
          << "' (expected: mass x y z vx vy vz)";
        throw UsageError(e.str());
      }
      if (count < 7) v[count] = x;
      ++count;
      cur = endp;
    }
    if (count != 7) {
      std::ostringstream e;
      e << "--scenario file:" << path << ": line " << lineNo << ": expected 7 numbers (mass x y z vx vy vz), found "
        << count;
      throw UsageError(e.str());
    }
    if (v[0] < 0.0f) {
      std::ostringstream e;
      e << "--scenario file:" << path << ": line " << lineNo << ": mass " << v[0] << " must be >= 0";
      throw UsageError(e.str());
    }
    const uint32_t id = static_cast<uint32_t>(b.pos.size());
    b.pos.push_back(Vec4{v[1], v[2], v[3], v[0]});
    b.vel.push_back(Vec4{v[4], v[5], v[6], 0.0f});
    b.id.push_back(id);
  }
  if (in.bad()) throw UsageError("--scenario file:" + path + ": read error");
  if (b.size() == 0) throw UsageError("--scenario file:" + path + ": no bodies (expected lines: mass x y z vx vy vz)");
  return b;
}

void writeBodiesFile(const std::string& path, const Bodies& bodies) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw UsageError("--out " + path + ": cannot write (" + std::strerror(errno) + ")");
  std::fprintf(f, "# murmuration bodies: %zu\n# mass x y z vx vy vz\n", bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i) {
    const Vec4& p = bodies.pos[i];
    const Vec4& v = bodies.vel[i];
    // %.9g round-trips every float exactly.
    std::fprintf(f, "%.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", p.w, p.x, p.y, p.z, v.x, v.y, v.z);
  }
  const bool ok = std::fflush(f) == 0 && !std::ferror(f);
  std::fclose(f);
  if (!ok) throw UsageError("--out " + path + ": write failed");
}

}  // namespace murmur::core
