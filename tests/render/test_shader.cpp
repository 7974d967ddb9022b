#include "render/shader.h"

#include <gtest/gtest.h>
#include <glad/gl.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "gl_test_context.h"
#include "render/renderer.h"

namespace murmur::render {
namespace {

using test::GlTest;
namespace fs = std::filesystem;

class Shader : public GlTest {};

// Expects `fn` to throw std::runtime_error whose message contains every one of `needles`.
template <typename Fn>
void expectThrowMentioning(Fn fn, std::initializer_list<std::string> needles) {
  try {
    fn();
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    for (const std::string& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << msg;
  }
}

fs::path scratchDir(const std::string& tag) {
  fs::path dir = fs::temp_directory_path() / ("murmur_shader_test_" + tag + "_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

void writeText(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST_F(Shader, EveryEmbeddedFileIsListed) {
  const auto names = embeddedShaderNames();
  for (const ProgramDesc& desc : Renderer::programs()) {
    for (const ShaderStage& stage : desc.stages) {
      EXPECT_NE(std::find(names.begin(), names.end(), stage.file), names.end()) << stage.file;
    }
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "colour.glsl"), names.end());
}

TEST_F(Shader, EveryProgramCompilesAndLinks) {
  for (const ProgramDesc& desc : Renderer::programs()) {
    SCOPED_TRACE(desc.name);
    ShaderProgram program;
    ASSERT_NO_THROW(program = ShaderProgram::build(desc));
    EXPECT_NE(program.id(), 0u);
    GLint linked = GL_FALSE;
    glGetProgramiv(program.id(), GL_LINK_STATUS, &linked);
    EXPECT_EQ(linked, GL_TRUE);
    EXPECT_GE(program.location("u_projection"), 0);  // every program projects
  }
}

TEST_F(Shader, SyntaxErrorNamesTheFile) {
  expectThrowMentioning(
      [] { compileShader(GL_FRAGMENT_SHADER, "broken.frag", "#version 450 core\nvoid main() { oops }\n"); },
      {"broken.frag", "fragment"});
}

TEST_F(Shader, ErrorInAnIncludedFileNamesBothFiles) {
  const fs::path dir = scratchDir("include");
  writeText(dir / "helper.glsl", "float helper() { return 1.0 +; }\n");
  writeText(dir / "main.frag",
            "#version 450 core\n#include \"helper.glsl\"\nout vec4 o;\nvoid main() { o = vec4(helper()); }\n");
  const ShaderSource source(dir.string());
  expectThrowMentioning([&] { compileShader(GL_FRAGMENT_SHADER, "main.frag", source.load("main.frag"), &source); },
                        {"main.frag", "helper.glsl"});
  fs::remove_all(dir);
}

TEST_F(Shader, ProgramFromADirectoryReportsTheBrokenFile) {
  const fs::path dir = scratchDir("dir");
  writeText(dir / "ok.vert", "#version 450 core\nvoid main() { gl_Position = vec4(0.0); }\n");
  writeText(dir / "bad.frag", "#version 450 core\nout vec4 o;\nvoid main() { o = vec3(1.0); }\n");
  const ShaderSource source(dir.string());
  expectThrowMentioning(
      [&] { ShaderProgram::build({"test", {{GL_VERTEX_SHADER, "ok.vert"}, {GL_FRAGMENT_SHADER, "bad.frag"}}}, source); },
      {"bad.frag"});
  expectThrowMentioning([&] { source.load("missing.frag"); }, {"missing.frag"});
  fs::remove_all(dir);
}

TEST_F(Shader, UnknownEmbeddedNameThrows) {
  expectThrowMentioning([] { ShaderSource().load("nope.vert"); }, {"nope.vert"});
}

TEST_F(Shader, LinkErrorNamesTheProgram) {
  // A fragment shader reading an input that the vertex shader never writes with a matching type.
  const fs::path dir = scratchDir("link");
  writeText(dir / "a.vert", "#version 450 core\nout vec3 v;\nvoid main() { v = vec3(1.0); gl_Position = vec4(0.0); }\n");
  writeText(dir / "b.frag", "#version 450 core\nin vec2 v;\nout vec4 o;\nvoid main() { o = vec4(v, 0.0, 1.0); }\n");
  expectThrowMentioning(
      [&] {
        ShaderProgram::build({"mismatch", {{GL_VERTEX_SHADER, "a.vert"}, {GL_FRAGMENT_SHADER, "b.frag"}}},
                             ShaderSource(dir.string()));
      },
      {"mismatch", "a.vert", "b.frag"});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace murmur::render
