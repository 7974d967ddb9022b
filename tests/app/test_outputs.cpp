// Outputs that are complete or untouched, signals that stop a run cleanly, and the checks that
// happen before a run starts. A full disk is simulated with the file-size limit (ulimit -f, with
// SIGXFSZ ignored so that a write past it fails with EFBIG as on a full disk) and with /dev/full;
// neither needs privileges.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "app/bench_output.h"
#include "app/engine_factory.h"
#include "app/options.h"
#include "core/csv.h"
#include "core/format.h"
#include "core/scenarios.h"
#include "run_command.h"

using namespace murmur;
namespace fs = std::filesystem;

namespace {
using test::lineCount;
using test::Result;

const std::string kExe = test::murmurExe();
const std::string kHeadless = " --headless --no-render --engine cpu ";

// A fresh folder per test, removed afterwards.
class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : dir_(fs::path(::testing::TempDir()) / ("murmur_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  std::string path(const std::string& file) const { return (dir_ / file).string(); }
  // Every file in the folder: a leftover temporary shows up here.
  std::string listing() const {
    std::string s;
    for (const auto& e : fs::directory_iterator(dir_)) s += e.path().filename().string() + " ";
    return s;
  }

 private:
  fs::path dir_;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Runs murmur with writes limited to `kib` KiB per file.
Result runLimited(int kib, const std::string& args) {
  return test::runCommand("bash -c \"trap '' XFSZ; ulimit -f " + std::to_string(kib) + "; exec " + kExe + " " + args +
                          "\"");
}

// Starts murmur in the background, waits until `readyTest` (a shell test) holds, sends `signals`
// ("INT", or "INT INT") and reports the exit status as the shell sees it: 128 + the signal
// whether the process stopped itself with that status or was killed by the signal.
Result runAndSignal(const std::string& args, const std::string& readyTest, const std::string& signals) {
  const std::string script = kExe + " " + args + " & pid=$!; for i in $(seq 600); do " + readyTest +
                             " && break; sleep 0.1; done; sleep 0.5; for s in " + signals +
                             "; do kill -$s $pid; done; wait $pid; echo status=$?";
  return test::runCommand("bash -c '" + script + "'");
}

// The device line comes just before the step loop; the log is its copy.
std::string startedLog(const std::string& log) { return " 2> >(tee " + log + " >&2)"; }
std::string started(const std::string& log) { return "grep -q device: " + log + " 2>/dev/null"; }
}  // namespace

TEST(Outputs, OutOnAFullDiskKeepsTheOldFile) {
  Scratch s("out_full");
  const std::string out = s.path("state.txt");
  put(out, "old contents\n");
  const Result r = runLimited(4, kHeadless + "--n 2000 --steps 1 --out " + out);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("--out " + out), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("engine="), std::string::npos) << "no summary for a run that lost its output\n" << r.out;
  EXPECT_EQ(slurp(out), "old contents\n");
  EXPECT_EQ(s.listing(), "state.txt ") << "no temporary left behind";
}

TEST(Outputs, WriteErrorsOnSpecialFilesAreReported) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const Result r = test::runCommand(kExe + kHeadless + "--n 200 --steps 1 --out /dev/full");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("--out /dev/full"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No space left"), std::string::npos) << r.out;
}

TEST(Outputs, CsvOnAFullDiskKeepsTheOldFile) {
  Scratch s("csv_full");
  const std::string csv = s.path("t.csv");
  put(csv, "old\n");
  // The row names the scenario file: a long path makes it longer than the 1 KiB limit (some
  // OpenMP runtimes need a small shared-memory file at start-up, so the limit cannot be 0).
  std::string dir = s.path("");
  for (int i = 0; i < 5; ++i) dir += std::string(200, 'd') + "/";
  fs::create_directories(dir);
  put(dir + "b.txt", "1 0 0 0 0 0 0\n");
  const Result r = runLimited(1, kHeadless + "--steps 1 --scenario file:" + dir + "b.txt --csv " + csv);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("--csv " + csv), std::string::npos) << r.out;
  EXPECT_EQ(slurp(csv), "old\n");
  EXPECT_EQ(s.listing().find(".tmp-"), std::string::npos) << s.listing();
}

TEST(Outputs, HeadlessCsvHoldsOneBenchRow) {
  Scratch s("csv_row");
  const std::string csv = s.path("t.csv");
  const Result r = test::runCommand(kExe + kHeadless + "--n 300 --steps 4 --pipeline scattered --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  std::istringstream lines(slurp(csv));
  std::string header, row, extra;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.rfind("timestamp,git_sha,gpu", 0), 0u);
  EXPECT_NE(row.find(",cpu,boids,scattered,dense:4,300,"), std::string::npos) << row;  // the default world
  // The second field is the revision of this build: a short commit (+dirty when tracked files
  // differed from it), or "unknown" outside a git checkout.
  const size_t a = row.find(',') + 1, b = row.find(',', a);
  const std::string sha = row.substr(a, b - a);
  EXPECT_TRUE(std::regex_match(sha, std::regex("[0-9a-f]{7,40}(\\+dirty)?|unknown"))) << sha;
}

TEST(Outputs, ScreenshotOnAFullDiskIsNotReportedWritten) {
  Scratch s("png_full");
  const std::string png = s.path("shot.png");
  put(png, "old png");
  const Result r = runLimited(1, " --headless --engine cpu --n 300 --steps 1 --width 256 --height 256 --screenshot " + png);
  if (r.out.find("no offscreen OpenGL context") != std::string::npos) GTEST_SKIP() << "no EGL here: " << r.out;
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out.find("wrote"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--screenshot " + png), std::string::npos) << r.out;
  EXPECT_EQ(slurp(png), "old png");
  EXPECT_EQ(s.listing(), "shot.png ");
}

TEST(Outputs, BenchOnAFullDiskFailsAndKeepsTheOldSidecar) {
  Scratch s("bench_full");
  const std::string csv = s.path("b.csv");
  put(csv, "old csv\n");
  put(csv + ".json", "{\"runs\": []}\n");
  const Result r = runLimited(1, "bench --engine cpu --n 300 --pipeline naive --warmup 1 --steps 2 --repeats 1 --csv " + csv);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(slurp(csv + ".json"), "{\"runs\": []}\n");
  EXPECT_EQ(s.listing().find(".tmp-"), std::string::npos) << s.listing();
}

TEST(Outputs, UnwritableOutputsFailBeforeTheRun) {
  // A run of 10^8 steps: each of these must fail at once, before the first step.
  for (const std::string opt : {"--out", "--csv", "--screenshot", "--record"}) {
    const std::string ext = opt == "--screenshot" ? ".png" : opt == "--record" ? ".mp4" : ".txt";
    const Result r = test::runCommand("timeout 60 " + kExe + " --headless --engine cpu --n 100 --steps 100000000 " +
                                      opt + " /nonexistent-murmur-dir/x" + ext);
    EXPECT_EQ(r.status, 2) << opt << "\n" << r.out;
    EXPECT_NE(r.out.find(opt + " /nonexistent-murmur-dir/x" + ext), std::string::npos) << r.out;
    EXPECT_EQ(lineCount(r.out), 1) << r.out;
  }
  Scratch s("is_dir");
  const Result d = test::runCommand(kExe + kHeadless + "--n 100 --steps 100000000 --out " + s.path(""));
  EXPECT_EQ(d.status, 2) << d.out;
  EXPECT_NE(d.out.find("folder"), std::string::npos) << d.out;
}

TEST(Outputs, SavedStateKeepsForceWorldAndStep) {
  Scratch s("state");
  const std::string a = s.path("a.txt"), b = s.path("b.txt");
  Result r = test::runCommand(kExe + kHeadless + "--n 400 --steps 3 --half-size 40 --out " + a);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string text = slurp(a);
  EXPECT_NE(text.find("# force: boids\n"), std::string::npos);
  EXPECT_NE(text.find("# half_size: 40\n"), std::string::npos);
  EXPECT_NE(text.find("# step: 3\n"), std::string::npos);
  // Loaded back it is still boids in the same world, and the step count goes on.
  r = test::runCommand(kExe + kHeadless + "--steps 2 --scenario file:" + a + " --out " + b);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("force=boids"), std::string::npos) << r.out;
  const std::string next = slurp(b);
  EXPECT_NE(next.find("# half_size: 40\n"), std::string::npos);
  EXPECT_NE(next.find("# step: 5\n"), std::string::npos);
  // Continuing from the file equals running longer in one go.
  const Result whole = test::runCommand(kExe + kHeadless + "--n 400 --steps 5 --half-size 40");
  ASSERT_EQ(whole.status, 0) << whole.out;
  const auto sum = [](const std::string& o) { return o.substr(o.find("checksum="), 25); };
  EXPECT_EQ(sum(whole.out), sum(r.out));
  // Warm-up steps are steps the state took.
  r = test::runCommand(kExe + kHeadless + "--n 400 --warmup 4 --steps 1 --half-size 40 --out " + a);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(slurp(a).find("# step: 5\n"), std::string::npos);
}

TEST(Outputs, TruncatedStateIsRefused) {
  Scratch s("cut");
  const std::string a = s.path("a.txt"), cut = s.path("cut.txt");
  ASSERT_EQ(test::runCommand(kExe + kHeadless + "--n 300 --steps 1 --out " + a).status, 0);
  // Cut on a line boundary: every remaining line is well formed, only the count gives it away.
  const std::string text = slurp(a);
  put(cut, text.substr(0, text.rfind('\n', text.size() / 2) + 1));
  const Result r = test::runCommand(kExe + kHeadless + "--steps 1 --scenario file:" + cut);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("header says 300 bodies"), std::string::npos) << r.out;
  EXPECT_EQ(lineCount(r.out), 1) << r.out;
}

TEST(Outputs, SubnormalValuesRoundTrip) {
  Scratch s("subnormal");
  const std::string in = s.path("in.txt"), out = s.path("out.txt");
  put(in, "1 1.00000022e-39 0 0 0 0 0\n1 5 5 5 1e-45 0 0\n");
  const Result r = test::runCommand(kExe + kHeadless + "--steps 0 --scenario file:" + in + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string text = slurp(out);
  EXPECT_NE(text.find("1 1.00000022e-39 0 0 0 0 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" 1.40129846e-45 "), std::string::npos) << text;
  const Result again = test::runCommand(kExe + kHeadless + "--steps 0 --scenario file:" + out);
  EXPECT_EQ(again.status, 0) << again.out;
}

TEST(Outputs, FirstSignalFinishesTheStepAndWritesTheOutputs) {
  Scratch s("sigint");
  for (const auto& [sig, status] : {std::pair<std::string, int>{"INT", 130}, {"TERM", 143}}) {
    const std::string out = s.path("out_" + sig + ".txt"), csv = s.path("t_" + sig + ".csv");
    const std::string log = s.path("log_" + sig);
    const Result r = runAndSignal(kHeadless + "--n 3000 --steps 100000000 --out " + out + " --csv " + csv +
                                      startedLog(log), started(log), sig);
    EXPECT_NE(r.out.find("status=" + std::to_string(status)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("interrupted=SIG" + sig), std::string::npos) << r.out;
    const std::string text = slurp(out);
    EXPECT_NE(text.find("# bodies: 3000\n"), std::string::npos);
    EXPECT_EQ(lineCount(text), 3000 + lineCount(text.substr(0, text.find("# mass"))) + 1);
    EXPECT_NE(slurp(csv).find(",cpu,boids,"), std::string::npos);
  }
}

TEST(Outputs, SecondSignalEndsAtOnce) {
  // The second signal is sent once the first has been taken (the run says it is stopping) and
  // while 400k bodies are being written: the process dies at once and leaves no --out
  // (the temporary was never renamed into place).
  Scratch s("sigint2");
  const std::string out = s.path("out.txt"), log = s.path("log");
  const std::string script = kExe + kHeadless + "--n 400k --steps 100000000 --out " + out + startedLog(log) +
                             " & pid=$!; for i in $(seq 600); do " + started(log) +
                             " && break; sleep 0.1; done; sleep 0.5; kill -INT $pid; "
                             "for i in $(seq 3000); do grep -q stopping " + log +
                             " && break; sleep 0.01; done; kill -INT $pid; wait $pid; echo status=$?";
  const Result r = test::runCommand("bash -c '" + script + "'");
  EXPECT_NE(r.out.find("status=130"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stopping"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("engine="), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Outputs, InterruptedBenchMarksItsSidecar) {
  Scratch s("bench_sig");
  const std::string csv = s.path("b.csv");
  const Result r = runAndSignal("bench --engine cpu --n 1000,2000,3000,4000,5000 --pipeline naive,scattered,coherent "
                                "--warmup 1 --repeats 3 --max-seconds 2 --csv " + csv,
                                "[ -e " + csv + ".json ]", "TERM");
  EXPECT_NE(r.out.find("status=143"), std::string::npos) << r.out;
  const std::string side = slurp(csv + ".json");
  EXPECT_NE(side.find("\"interrupted\": \"SIGTERM\""), std::string::npos) << side;
  EXPECT_NE(side.find("\"finished_utc\""), std::string::npos) << side;
  // Every CSV line is whole: the header's column count on each.
  std::istringstream lines(slurp(csv));
  std::string header, line;
  std::getline(lines, header);
  const auto commas = [](const std::string& x) {  // separators outside quoted cells
    int n = 0;
    bool quoted = false;
    for (char ch : x) {
      if (ch == '"') quoted = !quoted;
      n += ch == ',' && !quoted;
    }
    return n;
  };
  while (std::getline(lines, line)) EXPECT_EQ(commas(line), commas(header)) << line;
}

TEST(Outputs, ASparseWorldRunsInMemoryThatFollowsItsBodies) {
  // 1000 boids in a box of half-size 3000: at the rule's cell width a grid would hold 1.7 billion
  // cells (over 20 GB on the CPU engine). The cells widen instead (core::boidGridCellCap), and
  // every grid pipeline runs under 3 GB of address space, under every boundary.
  for (const char* pipe : {"scattered", "coherent", "rows", "verlet", "clusters"})
    for (const char* boundary : {"wrap", "periodic", "reflect", "open"}) {
      const Result r = test::runCommand("bash -c 'ulimit -v 3000000; exec " + kExe + kHeadless +
                                        "--n 1000 --half-size 3000 --steps 5 --pipeline " + pipe + " --boundary " +
                                        boundary + "'");
      EXPECT_EQ(r.status, 0) << pipe << " " << boundary << "\n" << r.out;
      EXPECT_NE(r.out.find("steps=5"), std::string::npos) << r.out;
    }
}

namespace {

// One CSV file's header and its rows, quotes understood (the gpu column holds commas).
std::vector<std::map<std::string, std::string>> readCsv(const std::string& path) {
  std::vector<std::vector<std::string>> lines;
  std::vector<std::string> fields(1);
  bool quoted = false;
  const std::string text = slurp(path);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"') fields.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.emplace_back();
    else if (c == '\n' && !quoted) lines.push_back(fields), fields.assign(1, "");
    else fields.back() += c;
  }
  std::vector<std::map<std::string, std::string>> rows;
  for (size_t r = 1; r < lines.size(); ++r) {
    std::map<std::string, std::string> row;
    for (size_t k = 0; k < lines[0].size() && k < lines[r].size(); ++k) row[lines[0][k]] = lines[r][k];
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

// The viewer's FPS log (F), a headless run's --csv and a bench row of the same setup on the CPU
// engine: one world, one set of columns, one definition of the frame rate. The viewer's row comes
// from the function the viewer calls each second (runRow), with its samples.
TEST(Outputs, ViewerLogHeadlessCsvAndBenchRowAgree) {
  Scratch s("three_rows");
  const std::string world = "--engine cpu --n 2000 --pipeline verlet";
  const Result h = test::runCommand(kExe + " --headless " + world + " --steps 6 --width 96 --height 64 --csv " +
                                    s.path("headless.csv"));
  if (h.out.find("no offscreen OpenGL context") != std::string::npos) GTEST_SKIP() << "no EGL here: " << h.out;
  ASSERT_EQ(h.status, 0) << h.out;
  const Result b = test::runCommand(kExe + " bench " + world + " --render --steps 6 --repeats 1 --warmup 0 --csv " +
                                    s.path("bench.csv"));
  ASSERT_EQ(b.status, 0) << b.out;
  {
    // The viewer's default world and engine for that command line, stepped and timed as it does.
    app::Options o;
    std::vector<std::string> args = {"murmur", "--engine", "cpu", "--n", "2000", "--pipeline", "verlet"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    ASSERT_TRUE(app::parseOptions(static_cast<int>(argv.size()), argv.data(), o));
    app::resolveDefaults(o);
    core::SimParams params = o.params;
    core::Scenario sc = core::makeScenario(o.scenario, params);
    params.halfSize = sc.halfSize;
    auto engine = app::makeEngine(core::EngineKind::Cpu, params);
    engine->reset(sc.bodies);
    app::RunSamples samples;
    for (int k = 0; k < 6; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      engine->step(1);
      samples.stepMs.push_back(core::msSince(t0));
      samples.renderMs.push_back(0.5 + 0.1 * k);  // the viewer's drawFrame times
    }
    samples.drawMode = "boids";
    core::CsvWriter log(s.path("viewer.csv"), false);
    log.write(app::runRow(core::EngineKind::Cpu, params, o.scenario, *engine, engine->numBodies(), samples));
  }
  const auto hr = readCsv(s.path("headless.csv")), br = readCsv(s.path("bench.csv")), vr = readCsv(s.path("viewer.csv"));
  ASSERT_EQ(hr.size(), 1u);
  ASSERT_EQ(br.size(), 1u);
  ASSERT_EQ(vr.size(), 1u);
  EXPECT_EQ(slurp(s.path("headless.csv")).substr(0, 200), slurp(s.path("viewer.csv")).substr(0, 200));  // one header
  for (const char* col : {"engine", "force", "pipeline", "scenario", "n", "block_size", "cell_width_factor",
                          "render", "draw", "steps"}) {
    EXPECT_EQ(hr[0].at(col), vr[0].at(col)) << col;
    EXPECT_EQ(br[0].at(col), vr[0].at(col)) << col;
  }
  EXPECT_EQ(vr[0].at("scenario"), "dense:4");
  EXPECT_EQ(vr[0].at("block_size"), "");  // no block size on the CPU engine
  for (const auto* row : {&hr[0], &br[0], &vr[0]}) {
    const double sim = std::stod(row->at("sim_ms_median")), render = std::stod(row->at("render_ms"));
    EXPECT_NEAR(std::stod(row->at("frame_fps")), 1000.0 / (sim + render), 1e-3 * 1000.0 / (sim + render));
  }
}
