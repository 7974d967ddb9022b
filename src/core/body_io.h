// Body files: one body per line, "mass x y z vx vy vz", then optionally species, '#' starts a
// comment. A state saved by --out starts with a header of "# key: value" lines that `file:` reads
// back:
//
//   # murmuration state 1
//   # bodies: 10000          binding: a file with another number of bodies is refused
//   # force: boids           the force mode the state was simulated with
//   # half_size: 100         the boids world (also inside params)
//   # step: 300              steps simulated so far
//   # params: {...}          every parameter, one line of the JSON that --params reads
//   # mass x y z vx vy vz    the column line (a comment: it binds nothing)
//
// Species (core/bodies.h) is an eighth column, a whole number from 0 to 255, written only when
// some body has a species other than 0 (the column line then ends in "species"): a state of
// species 0 throughout is written in seven columns. Reading, the first row sets the file's column
// count: seven (species 0 throughout: the species array stays empty) or eight (the eighth is the
// species, whatever the column line says); every other row must have as many.
//
// Plain files without the header still load (and a bare "# murmuration bodies: N" line, the older
// header, binds the count as well).
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "core/bodies.h"

namespace murmur::core {

struct StateHeader {
  bool hasBodies = false;
  size_t bodies = 0;
  std::string force;       // "boids" or "gravity"; empty = not given
  float halfSize = 0.0f;   // > 0 when given
  uint64_t step = 0;
  std::string paramsJson;  // empty = not given
};

// Throws UsageError naming the file (and the line number for a malformed line). A FIFO, device or
// folder is refused rather than opened (reading one could block forever). `header`, when given,
// receives the header.
Bodies readBodiesFile(const std::string& path, StateHeader* header = nullptr);

// The same from a stream; `name` is what messages call the file ("file:PATH").
Bodies readBodies(std::istream& in, const std::string& name, StateHeader* header = nullptr);

// Only the header (the leading comment lines), for reading the parameters before the bodies.
StateHeader readStateHeader(const std::string& path);

// Writes bodies in id order with full float precision (round-trips exactly through
// readBodiesFile, subnormals included), the species column when some species is not 0, and the
// header (bodies is set from `bodies`). The file is replaced atomically (core/atomic_file.h):
// UsageError when it cannot be created, WriteError when writing fails, std::logic_error when
// species is neither empty nor one per body.
void writeBodiesFile(const std::string& path, const Bodies& bodies, const StateHeader& header = {});

// Throws UsageError "<label>: ..." unless path is an existing regular file that can be read.
// label is how the user named it ("--params cfg.json").
void requireRegularFile(const std::string& label, const std::string& path);

}  // namespace murmur::core
