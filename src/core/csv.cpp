#include "core/csv.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "core/errors.h"

namespace murmur::core {

const std::vector<std::string>& benchCsvColumns() {
  static const std::vector<std::string> cols = {
      "timestamp",       "git_sha",      "gpu",          "cc",           "driver",
      "cuda",            "engine",       "force",        "pipeline",     "scenario",
      "n",               "block_size",   "cell_width_factor", "neighbours_mean", "render",
      "warmup_steps",    "steps",        "sim_ms_median", "sim_ms_min",  "sim_ms_p90",
      "steps_per_s",     "frame_fps",    "label_ms",     "sort_ms",      "bounds_ms",
      "reorder_ms",      "force_ms",     "integrate_ms", "render_ms",    "interactions_per_s",
      "gflops",          "draw"};
  return cols;
}

namespace {
bool knownColumn(const std::string& c) {
  for (const auto& k : benchCsvColumns())
    if (k == c) return true;
  return false;
}
}  // namespace

void CsvRow::set(const std::string& column, const std::string& value) {
  if (!knownColumn(column)) throw std::invalid_argument("CSV: unknown column " + column);
  cells_[column] = value;
}

void CsvRow::set(const std::string& column, double value) {
  if (!std::isfinite(value)) {
    set(column, std::string());
    return;
  }
  std::ostringstream s;
  s.precision(6);
  s << value;
  set(column, s.str());
}

void CsvRow::set(const std::string& column, long long value) { set(column, std::to_string(value)); }

std::string CsvRow::get(const std::string& column) const {
  auto it = cells_.find(column);
  return it == cells_.end() ? std::string() : it->second;
}

std::string csvEscape(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

CsvWriter::CsvWriter(const std::string& path, bool append) : path_(path) {
  bool writeHeader = true;
  if (append) {
    if (FILE* probe = std::fopen(path.c_str(), "r")) {
      writeHeader = std::fgetc(probe) == EOF;
      std::fclose(probe);
    }
  }
  f_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!f_) throw UsageError("--csv " + path + ": cannot write (" + std::strerror(errno) + ")");
  if (writeHeader) {
    const auto& cols = benchCsvColumns();
    for (size_t i = 0; i < cols.size(); ++i) std::fprintf(f_, "%s%s", i ? "," : "", cols[i].c_str());
    std::fprintf(f_, "\n");
    std::fflush(f_);
  }
}

CsvWriter::~CsvWriter() {
  if (f_) std::fclose(f_);
}

void CsvWriter::write(const CsvRow& row) {
  const auto& cols = benchCsvColumns();
  for (size_t i = 0; i < cols.size(); ++i)
    std::fprintf(f_, "%s%s", i ? "," : "", csvEscape(row.get(cols[i])).c_str());
  std::fprintf(f_, "\n");
  std::fflush(f_);
}

}  // namespace murmur::core
