#include "core/csv.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.h"
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
      "gflops",          "draw",         "list_ms",      "list_steps",   "observe_ms",
      "observe_flocks",  "rule",         "cut",          "boundary",
      "neighbours_timed", "topological"};
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

namespace {
std::string csvLine(const CsvRow& row) {
  const auto& cols = benchCsvColumns();
  std::string line;
  for (size_t i = 0; i < cols.size(); ++i) line += (i ? "," : "") + csvEscape(row.get(cols[i]));
  return line + "\n";
}

std::string csvHeader() {
  const auto& cols = benchCsvColumns();
  std::string line;
  for (size_t i = 0; i < cols.size(); ++i) line += (i ? "," : "") + cols[i];
  return line + "\n";
}

// Rows under another header would be read as the wrong columns.
void checkHeader(const std::string& option, const std::string& path, const std::string& contents) {
  const std::string header = csvHeader();
  if (!contents.empty() && contents.compare(0, header.size(), header) != 0)
    throw UsageError(option + " " + path +
                     ": its columns are not the ones this version writes (its first line differs); "
                     "append to a file this version wrote, or write a new one");
}
}  // namespace

void checkAppendable(const std::string& option, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // no file yet: the header starts it
  std::ostringstream old;
  old << in.rdbuf();
  checkHeader(option, path, old.str());
}

CsvWriter::CsvWriter(const std::string& path, bool append, std::string option)
    : path_(path), option_(std::move(option)) {
  if (append) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      contents_ = old.str();
      checkHeader(option_, path, contents_);
      if (!contents_.empty() && contents_.back() != '\n') contents_ += '\n';
    }
  }
  if (contents_.empty()) contents_ = csvHeader();
  save();
}

void writeCsvFile(const std::string& option, const std::string& path, const std::vector<CsvRow>& rows) {
  std::string text = csvHeader();
  for (const CsvRow& r : rows) text += csvLine(r);
  writeFileAtomically(option, path, text);
}

void CsvWriter::save() const { writeFileAtomically(option_, path_, contents_); }

void CsvWriter::write(const CsvRow& row) {
  const size_t before = contents_.size();
  contents_ += csvLine(row);
  try {
    save();
  } catch (...) {
    contents_.resize(before);  // the file still holds the rows before this one
    throw;
  }
}

}  // namespace murmur::core
