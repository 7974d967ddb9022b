#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/csv.h"
#include "core/errors.h"

using namespace murmur::core;

namespace {
std::vector<std::string> readLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}
}  // namespace

TEST(Csv, SchemaHasTheDesignColumnsInOrder) {
  const auto& c = benchCsvColumns();
  ASSERT_EQ(c.size(), 41u);
  EXPECT_EQ(c.front(), "timestamp");
  EXPECT_EQ(c[10], "n");
  EXPECT_EQ(c[17], "sim_ms_median");
  EXPECT_EQ(c[30], "gflops");
  EXPECT_EQ(c[31], "draw");  // appended later: older CSVs still read
  EXPECT_EQ(c[32], "list_ms");
  EXPECT_EQ(c[33], "list_steps");
  EXPECT_EQ(c[34], "observe_ms");  // bench --observe (docs/observables.md)
  EXPECT_EQ(c[35], "observe_flocks");
  EXPECT_EQ(c[36], "rule");  // the rule table's row the run ran (docs/design.md#rules-and-how-to-add-a-rule)
  EXPECT_EQ(c[37], "cut");  // what --max-seconds cut: warmup, steps, warmup+steps or empty
  EXPECT_EQ(c[38], "boundary");  // the local rules' faces: wrap or periodic (empty for gravity)
  EXPECT_EQ(c[39], "neighbours_timed");  // the neighbours of the state the timed steps left
  EXPECT_EQ(c.back(), "topological");      // K of --topological (empty: metric neighbours)
}

TEST(Csv, HeaderOnceRowsAppendEmptyCellsForMissing) {
  const std::string path = ::testing::TempDir() + "murmur_bench.csv";
  {
    CsvWriter w(path, false);
    CsvRow r;
    r.set("engine", std::string("cpu"));
    r.set("n", 1000LL);
    r.set("sim_ms_median", 1.25);
    w.write(r);
  }
  {
    CsvWriter w(path, true);  // append: no second header
    CsvRow r;
    r.set("gpu", std::string("A, \"quoted\" GPU"));
    w.write(r);
  }
  const auto lines = readLines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("timestamp,git_sha,gpu", 0), 0u);
  EXPECT_EQ(std::count(lines[1].begin(), lines[1].end(), ','), static_cast<long>(benchCsvColumns().size()) - 1);
  EXPECT_NE(lines[1].find(",cpu,"), std::string::npos);
  EXPECT_NE(lines[1].find(",1000,"), std::string::npos);
  EXPECT_NE(lines[2].find("\"A, \"\"quoted\"\" GPU\""), std::string::npos);
  {
    CsvWriter w(path, false);  // overwrite
  }
  EXPECT_EQ(readLines(path).size(), 1u);
}

TEST(Csv, UnknownColumnAndUnwritablePathAreErrors) {
  CsvRow r;
  EXPECT_THROW(r.set("fps", 1.0), std::invalid_argument);
  EXPECT_THROW(CsvWriter("/nonexistent-dir/x.csv", false), UsageError);
}
