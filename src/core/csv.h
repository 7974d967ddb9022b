// The benchmark CSV schema (docs/design.md#the-benchmark-csv-schema): one tidy row per measured configuration. Empty cells
// where a column does not apply. Used by the benchmark and by the viewer's FPS recording.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace murmur::core {

// Column names, in order.
const std::vector<std::string>& benchCsvColumns();

// A row keyed by column name; missing columns are written empty. Unknown keys are rejected.
class CsvRow {
 public:
  void set(const std::string& column, const std::string& value);
  void set(const std::string& column, double value);
  void set(const std::string& column, long long value);
  std::string get(const std::string& column) const;

 private:
  friend class CsvWriter;
  std::map<std::string, std::string> cells_;
};

// Throws UsageError when `path` exists, is not empty and does not start with this version's
// header: rows appended to it would be read as other columns. CsvWriter checks the same.
void checkAppendable(const std::string& option, const std::string& path);

// Writes the header (unless appending to a non-empty file) and rows. The file is replaced
// atomically after every row (core/atomic_file.h), so a sweep interrupted half-way keeps what it
// measured and a full disk never leaves a cut row: the file holds the previous rows or all of
// them. Throws UsageError when the file cannot be created, WriteError when a write fails.
// `option` names the file in messages ("--csv").
class CsvWriter {
 public:
  CsvWriter(const std::string& path, bool append, std::string option = "--csv");
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;
  void write(const CsvRow& row);
  const std::string& path() const { return path_; }

 private:
  void save() const;
  std::string path_, option_;
  std::string contents_;  // everything the file holds
};

// The header and `rows` as one new file, written atomically in one go (the old file stays whole
// if anything fails).
void writeCsvFile(const std::string& option, const std::string& path, const std::vector<CsvRow>& rows);

// Quotes a cell when it holds a comma, quote or newline.
std::string csvEscape(const std::string& s);

}  // namespace murmur::core
