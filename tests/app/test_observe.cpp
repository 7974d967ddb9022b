// The observables CSV and the trajectory outputs of headless runs: what the files hold (read back
// with the HDF5 C API, bitwise against the state the engine held), the XDMF index as a reader
// sees it, a run killed mid-way, species from each engine through frames and restarts, and bad
// paths refused before the run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "app/engine_factory.h"
#include "core/body_io.h"
#include "core/params.h"
#include "core/scenarios.h"
#include "core/trajectory.h"
#include "run_command.h"

#if defined(MURMUR_HAVE_HDF5)
#include <hdf5.h>
#endif

using namespace murmur;
namespace fs = std::filesystem;

namespace {

const std::string kExe = test::murmurExe();
const std::string kHeadless = " --headless --no-render --engine cpu ";

class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : dir_(fs::path(::testing::TempDir()) / ("murmur_obs_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& file) const { return (dir_ / file).string(); }
  std::string listing() const {
    std::string s;
    for (const auto& e : fs::directory_iterator(dir_)) s += e.path().filename().string() + " ";
    return s;
  }

 private:
  fs::path dir_;
};

std::vector<std::string> lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string c; std::getline(ss, c, ',');) out.push_back(c);
  if (!s.empty() && s.back() == ',') out.push_back("");
  return out;
}

TEST(ObservablesCsv, OneRowPerSampleWithTheForcesColumns) {
  Scratch s("csv");
  const test::Result r = test::runCommand(kExe + kHeadless + "--n 2000 --steps 50 --observe-every 10 --observables " +
                                          s.path("b.csv") + " --observables-flocks");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto b = lines(s.path("b.csv"));
  ASSERT_EQ(b.size(), 7u);  // header, steps 0, 10, ..., 50
  const auto head = split(b[0]);
  EXPECT_EQ(head[0], "step");
  EXPECT_EQ(head[2], "polarization");
  EXPECT_NE(std::find(head.begin(), head.end(), "flocks"), head.end());
  EXPECT_EQ(split(b[6])[0], "50");
  for (size_t i = 1; i < b.size(); ++i) EXPECT_EQ(split(b[i]).size(), head.size()) << b[i];

  const test::Result g = test::runCommand(kExe + kHeadless + "--scenario plummer --n 500 --steps 20 --observe-every 20 "
                                          "--observables " + s.path("g.csv"));
  ASSERT_EQ(g.status, 0) << g.out;
  const auto gl = lines(s.path("g.csv"));
  ASSERT_EQ(gl.size(), 3u);
  const auto gh = split(gl[0]);
  const auto drift = std::find(gh.begin(), gh.end(), "energy_drift") - gh.begin();
  ASSERT_LT(size_t(drift), gh.size());
  EXPECT_EQ(split(gl[1])[size_t(drift)], "0");
  EXPECT_LT(std::fabs(std::stod(split(gl[2])[size_t(drift)])), 1e-3);
  EXPECT_EQ(std::find(gh.begin(), gh.end(), "polarization"), gh.end());
}

// The group columns are in every boids CSV; filled under walls only (not where the world wraps).
TEST(ObservablesCsv, GroupColumnsAreFilledUnderWallsOnly) {
  Scratch s("group");
  for (const char* boundary : {"wrap", "periodic", "reflect"}) {
    const std::string csv = s.path(std::string(boundary) + ".csv");
    const test::Result r = test::runCommand(kExe + kHeadless + "--n 2000 --steps 20 --observe-every 10 --boundary " +
                                            boundary + " --observables " + csv);
    ASSERT_EQ(r.status, 0) << boundary << "\n" << r.out;
    const auto b = lines(csv);
    ASSERT_EQ(b.size(), 4u) << boundary;
    const auto head = split(b[0]);
    const auto column = [&](const char* name) { return size_t(std::find(head.begin(), head.end(), name) - head.begin()); };
    const size_t pol = column("polarization");
    for (const char* name : {"group_polarization", "group_rotation", "group_angular_momentum"}) {
      const size_t c = column(name);
      ASSERT_LT(c, head.size()) << boundary << " " << name;
      for (size_t i = 1; i < b.size(); ++i) {
        const auto row = split(b[i]);
        ASSERT_EQ(row.size(), head.size()) << b[i];
        if (std::string(boundary) != "reflect") {
          EXPECT_EQ(row[c], "") << boundary << " " << name << ": " << b[i];
          continue;
        }
        ASSERT_NE(row[c], "") << boundary << " " << name << ": " << b[i];
        const double v = std::stod(row[c]);
        EXPECT_GE(v, 0.0) << name;
        if (std::string(name) != "group_angular_momentum") {
          EXPECT_LE(v, 1.0) << name;
        }
        if (std::string(name) == "group_polarization") {
          EXPECT_EQ(row[c], row[pol]);
        }
      }
    }
  }
}

TEST(ObservablesCsv, BadInputsAreOneLineAndStatusTwo) {
  Scratch s("bad");
  const std::vector<std::string> bad = {
      "--n 100 --steps 5 --observables /nonexistent-dir/o.csv",
      "--n 100 --steps 5 --observe-every 0 --observables " + s.path("o.csv"),
      "--n 100 --steps 5 --observe-every 5",
      "--n 100 --steps 5 --observables-flocks",
      "--scenario plummer --n 100 --steps 5 --observables " + s.path("o.csv") + " --observables-flocks",
      "--n 100 --steps 5 --trajectory-every 5",
      "--n 100 --steps 5 --trajectory " + s.path("t.txt"),
      "--n 100 --steps 5 --trajectory /nonexistent-dir/t.h5",
      "--n 100 --steps 5 --trajectory " + s.path("same.h5") + " --out " + s.path("same.h5"),
      "--n 100 --steps 5 --observables " + s.path("x.csv") + " --csv " + s.path("x.csv"),
  };
  for (const std::string& args : bad) {
    const test::Result r = test::runCommand(kExe + kHeadless + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_EQ(test::lineCount(r.out), 1) << args << "\n" << r.out;
  }
  EXPECT_EQ(s.listing(), "");
  const test::Result b = test::runCommand(kExe + " bench --engine cpu --n 100 --observables " + s.path("o.csv"));
  EXPECT_EQ(b.status, 2) << b.out;
  const test::Result v = test::runCommand(kExe + " bench --engine cpu --n 100 --observe-flocks");
  EXPECT_EQ(v.status, 2) << v.out;
}

TEST(ObservablesBench, ObserveAddsItsCostAndTheLastValues) {
  Scratch s("bench");
  const std::string csv = s.path("b.csv");
  const test::Result r = test::runCommand(kExe + " bench --engine cpu --n 2000 --pipeline rows,coherent --steps 4 "
                                          "--repeats 1 --warmup 1 --observe --observe-flocks --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto b = lines(csv);
  ASSERT_EQ(b.size(), 3u);
  const auto head = split(b[0]);
  const size_t ms = size_t(std::find(head.begin(), head.end(), "observe_ms") - head.begin());
  const size_t fl = size_t(std::find(head.begin(), head.end(), "observe_flocks") - head.begin());
  ASSERT_LT(ms, head.size());
  ASSERT_LT(fl, head.size());
  // The gpu cell holds a quoted comma on the CPU engine: the last columns are counted from the end.
  const auto cell = [&](const std::string& line, size_t col) {
    const auto cells = split(line);
    return cells[cells.size() - (head.size() - col)];
  };
  // What a sample adds is a difference of two medians: a number, but not asserted positive (on a
  // loaded machine the two medians' noise can exceed it; tests assert no speed).
  for (int row : {1, 2}) {
    EXPECT_TRUE(std::isfinite(std::stod(cell(b[size_t(row)], ms)))) << b[size_t(row)];
    EXPECT_EQ(cell(b[size_t(row)], fl), "1");
  }
  std::ifstream side(csv + ".json");
  std::stringstream ss;
  ss << side.rdbuf();
  EXPECT_NE(ss.str().find("\"observe_over_step\""), std::string::npos);
  EXPECT_NE(ss.str().find("\"polarization\""), std::string::npos);
  // Without --observe the columns stay empty.
  const test::Result plain = test::runCommand(kExe + " bench --engine cpu --n 500 --pipeline rows --steps 2 --repeats 1 "
                                              "--warmup 1 --csv " + s.path("p.csv"));
  ASSERT_EQ(plain.status, 0) << plain.out;
  EXPECT_EQ(cell(lines(s.path("p.csv"))[1], ms), "");
}

#if defined(MURMUR_HAVE_HDF5)

// The dataset's shape, or empty when it does not exist.
std::vector<hsize_t> shapeOf(hid_t file, const std::string& name) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) return {};
  const hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  const hid_t sp = H5Dget_space(d);
  std::vector<hsize_t> dims(size_t(H5Sget_simple_extent_ndims(sp)));
  H5Sget_simple_extent_dims(sp, dims.data(), nullptr);
  H5Sclose(sp);
  H5Dclose(d);
  return dims;
}

template <typename T>
std::vector<T> readAll(hid_t file, const std::string& name, hid_t type) {
  std::vector<hsize_t> dims = shapeOf(file, name);
  size_t count = 1;
  for (hsize_t d : dims) count *= d;
  std::vector<T> out(count);
  const hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  EXPECT_GE(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0) << name;
  H5Dclose(d);
  return out;
}

// Checks the XDMF as a reader sees it: every DataItem names a dataset of the file that exists with
// the shape it states; returns the number of frames (grids with a Time) it names.
size_t checkXdmf(const std::string& xdmfPath, const std::string& h5Path) {
  std::ifstream f(xdmfPath);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string x = ss.str();
  EXPECT_NE(x.find("CollectionType=\"Temporal\""), std::string::npos);
  const hid_t file = H5Fopen(h5Path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(file, 0);
  const std::regex item("<DataItem Dimensions=\"([0-9 ]+)\"[^>]*Format=\"HDF\">([^:<]+):([^<]+)</DataItem>");
  size_t items = 0;
  for (auto it = std::sregex_iterator(x.begin(), x.end(), item); it != std::sregex_iterator(); ++it, ++items) {
    EXPECT_EQ((*it)[2].str(), fs::path(h5Path).filename().string());
    std::vector<hsize_t> want;
    std::stringstream dims((*it)[1].str());
    for (hsize_t d; dims >> d;) want.push_back(d);
    EXPECT_EQ(shapeOf(file, (*it)[3].str()), want) << (*it)[3].str();
  }
  H5Fclose(file);
  size_t frames = 0;
  for (size_t at = x.find("<Time "); at != std::string::npos; at = x.find("<Time ", at + 1)) ++frames;
  EXPECT_EQ(items, 6 * frames);  // topology, geometry, velocity, id, mass, species
  return frames;
}

TEST(Trajectory, HoldsExactlyWhatTheEngineHeld) {
  for (const char* world : {"--n 3000", "--scenario galaxies --n 2000 --pipeline tree"}) {
    Scratch s("exact");
    const std::string h5 = s.path("run.h5");
    const test::Result r =
        test::runCommand(kExe + kHeadless + world + " --steps 40 --trajectory " + h5 + " --trajectory-every 20 --out " +
                         s.path("final.txt") + " --observe-every 10 --observables " + s.path("o.csv"));
    ASSERT_EQ(r.status, 0) << r.out;
    const core::Bodies want = core::readBodiesFile(s.path("final.txt"));
    const size_t n = want.size();
    const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const auto steps = readAll<uint64_t>(file, "/step", H5T_NATIVE_UINT64);
    EXPECT_EQ(steps, (std::vector<uint64_t>{0, 20, 40}));
    EXPECT_EQ(shapeOf(file, "/frames/000002/positions"), (std::vector<hsize_t>{n, 3}));
    const auto pos = readAll<float>(file, "/frames/000002/positions", H5T_NATIVE_FLOAT);
    const auto vel = readAll<float>(file, "/frames/000002/velocities", H5T_NATIVE_FLOAT);
    const auto mass = readAll<float>(file, "/masses", H5T_NATIVE_FLOAT);
    const auto ids = readAll<uint32_t>(file, "/ids", H5T_NATIVE_UINT32);
    EXPECT_TRUE(want.species.empty());  // species 0 throughout: --out wrote seven columns
    EXPECT_EQ(readAll<uint8_t>(file, "/frames/000002/species", H5T_NATIVE_UINT8), std::vector<uint8_t>(n, 0));
    for (size_t i = 0; i < n; ++i) {
      const float p[4] = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2], mass[i]};
      const float v[3] = {vel[3 * i], vel[3 * i + 1], vel[3 * i + 2]};
      ASSERT_EQ(std::memcmp(p, &want.pos[i], sizeof p), 0) << world << " body " << i;
      ASSERT_EQ(std::memcmp(v, &want.vel[i], sizeof v), 0) << world << " body " << i;
      ASSERT_EQ(ids[i], want.id[i]);
    }
    // The observables of the same run, in the same file: 5 samples of step, time and the columns.
    const auto obs = shapeOf(file, "/observables");
    ASSERT_EQ(obs.size(), 2u);
    EXPECT_EQ(obs[0], 5u);
    EXPECT_EQ(obs[1], split(lines(s.path("o.csv"))[0]).size());
    H5Fclose(file);
    EXPECT_EQ(checkXdmf(s.path("run.xdmf"), h5), 3u);
    // A saved frame restarts a run, with its step and parameters.
    const core::Bodies frame = core::readBodiesFile(h5 + "@last");
    ASSERT_EQ(frame.size(), n);
    EXPECT_EQ(std::memcmp(frame.pos.data(), want.pos.data(), n * sizeof(core::Vec4)), 0);
    EXPECT_EQ(core::readStateHeader(h5 + "@1").step, 20u);
    const test::Result again =
        test::runCommand(kExe + kHeadless + "--scenario file:" + h5 + "@1 --steps 20 --out " + s.path("again.txt"));
    ASSERT_EQ(again.status, 0) << again.out;
    EXPECT_EQ(core::readStateHeader(s.path("again.txt")).step, 40u);
    for (const char* spec : {"@3", "@-1", "@x"}) {
      const test::Result bad = test::runCommand(kExe + kHeadless + "--scenario file:" + h5 + spec + " --steps 1");
      EXPECT_EQ(bad.status, 2) << bad.out;
      EXPECT_EQ(test::lineCount(bad.out), 1) << bad.out;
    }
  }
}

// A species that differs between neighbouring ids, often not 0, and takes 0 and 255 too.
core::Species speciesOf(uint32_t id) { return static_cast<core::Species>((id * 37u + 11u) % core::kSpeciesCount); }

// The XDMF names each frame's species as a node attribute (what ParaView colours by).
bool xdmfNamesSpecies(const std::string& xdmfPath, const std::string& h5Name, size_t n, uint64_t frame) {
  std::ifstream f(xdmfPath);
  std::stringstream ss;
  ss << f.rdbuf();
  char path[64];
  std::snprintf(path, sizeof path, "/frames/%06llu/species", static_cast<unsigned long long>(frame));
  const std::string want = "<Attribute Name=\"species\" AttributeType=\"Scalar\" Center=\"Node\">\n     <DataItem Dimensions=\"" +
                           std::to_string(n) + "\" NumberType=\"UChar\" Precision=\"1\" Format=\"HDF\">" + h5Name + ":" +
                           path + "</DataItem>";
  return ss.str().find(want) != std::string::npos;
}

// An engine's output with species in a trajectory: every frame holds the species the engine held,
// as uint8 (n), and reads back (file:run.h5@K) bit for bit with them.
void speciesRoundTrip(core::EngineKind kind) {
  Scratch s("species_engine");
  core::SimParams p = core::defaultParams();
  p.pipeline = core::Pipeline::Coherent;  // keeps its state in cell order: species move with bodies
  core::ScenarioSpec spec;
  spec.name = "dense";
  spec.n = 3000;
  const core::Scenario sc = core::makeScenario(spec, p);
  p.halfSize = sc.halfSize;
  core::Bodies start = sc.bodies;
  for (size_t i = 0; i < start.size(); ++i) start.species[i] = speciesOf(start.id[i]);
  const auto engine = app::makeEngine(kind, p);
  engine->reset(start);
  const std::string h5 = s.path("run.h5");
  std::vector<core::Bodies> held;
  {
    core::trajectory::Writer w("--trajectory", h5, core::trajectory::Meta{"boids", p.halfSize, ""});
    for (int k = 0; k < 3; ++k) {
      if (k > 0) engine->step(5);
      held.push_back(engine->readBodies());
      w.frame(held.back(), engine->stepCount(), 0.1 * k);
    }
  }
  const size_t n = start.size();
  const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(shapeOf(file, "/frames/000002/species"), (std::vector<hsize_t>{n}));
  const hid_t d = H5Dopen2(file, "/frames/000002/species", H5P_DEFAULT);
  const hid_t type = H5Dget_type(d);
  EXPECT_GT(H5Tequal(type, H5T_STD_U8LE), 0);
  H5Tclose(type);
  H5Dclose(d);
  H5Fclose(file);
  EXPECT_EQ(checkXdmf(s.path("run.xdmf"), h5), 3u);
  for (uint64_t k = 0; k < 3; ++k) {
    EXPECT_TRUE(xdmfNamesSpecies(s.path("run.xdmf"), "run.h5", n, k)) << "frame " << k;
    const core::Bodies b = core::readBodiesFile(h5 + "@" + std::to_string(k));
    ASSERT_EQ(b.size(), n);
    ASSERT_EQ(b.species.size(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(b.species[i], speciesOf(static_cast<uint32_t>(i))) << "frame " << k << " body " << i;
      ASSERT_EQ(b.species[i], held[k].species[i]);
      ASSERT_EQ(std::memcmp(&b.pos[i], &held[k].pos[i], sizeof(core::Vec4)), 0) << "frame " << k << " body " << i;
    }
  }
}

TEST(Trajectory, SpeciesRoundTripsFromTheCpuEngine) { speciesRoundTrip(core::EngineKind::Cpu); }

TEST(Trajectory, SpeciesRoundTripsFromTheCudaEngine) {
  std::string why;
  if (!app::cudaAvailable(&why)) GTEST_SKIP() << "no usable CUDA device: " << why;
  speciesRoundTrip(core::EngineKind::Cuda);
}

// Through the executable: a state file with species runs, writes its trajectory and --out with
// them, and a restart from a frame keeps them; a bad species is one line and status 2.
TEST(Trajectory, SpeciesTravelThroughARunAndItsRestart) {
  std::vector<std::string> engines = {"cpu"};
  if (app::cudaAvailable()) engines.push_back("cuda");
  for (const std::string& engine : engines) {
    Scratch s("species_cli_" + engine);
    const std::string run = " --headless --no-render --engine " + engine + " ";
    const test::Result first = test::runCommand(kExe + run + "--n 2000 --steps 1 --out " + s.path("s0.txt"));
    ASSERT_EQ(first.status, 0) << first.out;
    core::StateHeader h;
    core::Bodies b = core::readBodiesFile(s.path("s0.txt"), &h);
    ASSERT_TRUE(b.species.empty());
    b.species.resize(b.size());
    for (size_t i = 0; i < b.size(); ++i) b.species[i] = speciesOf(b.id[i]);
    core::writeBodiesFile(s.path("s.txt"), b, h);
    const std::string h5 = s.path("run.h5");
    const test::Result r = test::runCommand(kExe + run + "--scenario file:" + s.path("s.txt") + " --steps 20 --trajectory " +
                                            h5 + " --trajectory-every 10 --out " + s.path("final.txt"));
    ASSERT_EQ(r.status, 0) << r.out;
    const test::Result again = test::runCommand(kExe + run + "--scenario file:" + h5 + "@1 --steps 10 --out " +
                                                s.path("again.txt"));
    ASSERT_EQ(again.status, 0) << again.out;
    for (const std::string& spec : {s.path("final.txt"), h5 + "@0", h5 + "@1", h5 + "@last", s.path("again.txt")}) {
      const core::Bodies got = core::readBodiesFile(spec);
      ASSERT_EQ(got.species.size(), b.size()) << engine << " " << spec;
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got.species[i], speciesOf(static_cast<uint32_t>(i))) << engine << " " << spec << " body " << i;
    }
    const auto out = lines(s.path("final.txt"));
    EXPECT_NE(std::find(out.begin(), out.end(), "# mass x y z vx vy vz species"), out.end());
    EXPECT_TRUE(xdmfNamesSpecies(s.path("run.xdmf"), "run.h5", b.size(), 2));
    std::ofstream(s.path("bad.txt")) << "1 0 0 0 0 0 0 1\n1 1 0 0 0 0 0 2.5\n";
    const test::Result bad = test::runCommand(kExe + run + "--scenario file:" + s.path("bad.txt") + " --steps 1");
    EXPECT_EQ(bad.status, 2) << bad.out;
    EXPECT_EQ(test::lineCount(bad.out), 1) << bad.out;
    EXPECT_NE(bad.out.find("file:" + s.path("bad.txt") + ": line 2: species '2.5' is not a whole number from 0 to 255"),
              std::string::npos)
        << bad.out;
  }
}

TEST(Trajectory, AKilledRunLeavesEveryCompletedFrameReadable) {
  Scratch s("kill");
  const std::string h5 = s.path("run.h5"), xdmf = s.path("run.xdmf");
  // A run far too long to finish, killed with SIGKILL once the index names at least 4 frames.
  const test::Result r = test::runCommand(
      "bash -c '" + kExe + kHeadless + "--n 4000 --steps 100000000 --trajectory " + h5 +
      " --trajectory-every 3 & pid=$!; for i in $(seq 600); do [ $(grep -c \"<Time \" " + xdmf +
      " 2>/dev/null || echo 0) -ge 4 ] && break; sleep 0.05; done; kill -KILL $pid; wait $pid; echo status=$?'");
  ASSERT_NE(r.out.find("status=137"), std::string::npos) << r.out;
  const size_t frames = checkXdmf(xdmf, h5);
  EXPECT_GE(frames, 4u);
  const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_GE(readAll<uint64_t>(file, "/step", H5T_NATIVE_UINT64).size(), frames);
  H5Fclose(file);
  for (size_t k = 0; k < frames; ++k) {
    const core::Bodies b = core::readBodiesFile(h5 + "@" + std::to_string(k));
    EXPECT_EQ(b.size(), 4000u);
  }
  const test::Result again = test::runCommand(kExe + kHeadless + "--scenario file:" + h5 + "@last --steps 3");
  EXPECT_EQ(again.status, 0) << again.out;
}

TEST(Trajectory, AFullDiskLeavesEveryCompletedFrameReadable) {
  // A full disk simulated by the file-size limit (SIGXFSZ ignored, so that writes past it fail
  // with EFBIG): the run ends with status 1 and one line, the frames the index names all read,
  // and file:@last restarts from the last whole one.
  Scratch s("full");
  const std::string h5 = s.path("run.h5");
  const test::Result r = test::runCommand("bash -c \"trap '' XFSZ; ulimit -f 600; exec " + kExe + kHeadless +
                                          "--n 2000 --steps 400 --trajectory " + h5 + " --trajectory-every 5\"");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("murmur: error: --trajectory " + h5), std::string::npos) << r.out;
  const size_t frames = checkXdmf(s.path("run.xdmf"), h5);
  EXPECT_GE(frames, 2u);
  for (size_t k = 0; k < frames; ++k) EXPECT_EQ(core::readBodiesFile(h5 + "@" + std::to_string(k)).size(), 2000u);
  const test::Result again = test::runCommand(kExe + kHeadless + "--scenario file:" + h5 + "@last --steps 1");
  EXPECT_EQ(again.status, 0) << again.out;
}

TEST(Trajectory, UnwritableFolderIsRefusedBeforeTheRun) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  Scratch s("ro");
  fs::create_directories(s.path("ro"));
  fs::permissions(s.path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  const test::Result r = test::runCommand(kExe + kHeadless + "--n 100 --steps 5 --trajectory " + s.path("ro/t.h5"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(test::lineCount(r.out), 1) << r.out;
}

#else

TEST(Trajectory, RefusedWithoutHdf5) {
  Scratch s("nohdf5");
  const test::Result r = test::runCommand(kExe + kHeadless + "--n 100 --steps 5 --trajectory " + s.path("t.h5"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("HDF5"), std::string::npos) << r.out;
  EXPECT_EQ(s.listing(), "");
}

#endif

}  // namespace
