// GLSL programs built from the files in shaders/. Shader text comes from the copies embedded in the
// library at build time, or from a directory at run time (to edit GLSL without rebuilding).
// A shader file may pull in another with a line `#include "name.glsl"` (resolved here, with #line
// directives so that the driver's messages still point at the right file and line).
// Every function here needs a current OpenGL 4.5 context.
#pragma once
#include "render/module_guard.h"

#include <string>
#include <unordered_map>
#include <vector>

#include <glm/glm.hpp>

namespace murmur::render {

// Where shader text comes from. An empty directory means the embedded copies.
class ShaderSource {
 public:
  // The default is the embedded copies, unless the library was configured with MURMUR_SHADER_DIR.
  ShaderSource();
  explicit ShaderSource(std::string directory);

  // The text of one shader file, e.g. "boids.geom". Throws std::runtime_error naming the file
  // (and the directory) when it does not exist.
  std::string load(const std::string& file) const;
  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;
};

// Names of the embedded shader files, in the order CMake lists them.
std::vector<std::string> embeddedShaderNames();

// One stage of a program: its GL type (GL_VERTEX_SHADER, GL_GEOMETRY_SHADER, GL_FRAGMENT_SHADER)
// and the shader file that holds it.
struct ShaderStage {
  unsigned int type;
  std::string file;
};

// A program: a name for messages and its stages.
struct ProgramDesc {
  std::string name;
  std::vector<ShaderStage> stages;
};

// Compiles one stage and returns the GL shader object. `file` names the source in messages;
// `#include` lines are resolved through `includes` (an include without it is an error).
// Throws std::runtime_error with the file name, the stage and the driver's info log.
unsigned int compileShader(unsigned int type, const std::string& file, const std::string& text,
                           const ShaderSource* includes = nullptr);

// An owned, linked GL program. Move-only; deletes the program when destroyed.
class ShaderProgram {
 public:
  ShaderProgram() = default;
  // Compiles every stage and links. Throws std::runtime_error naming the failing file (compile)
  // or the program and its files (link), with the driver's info log.
  static ShaderProgram build(const ProgramDesc& desc, const ShaderSource& source = ShaderSource());

  ~ShaderProgram();
  ShaderProgram(ShaderProgram&& other) noexcept;
  ShaderProgram& operator=(ShaderProgram&& other) noexcept;
  ShaderProgram(const ShaderProgram&) = delete;
  ShaderProgram& operator=(const ShaderProgram&) = delete;

  unsigned int id() const { return id_; }
  const std::string& name() const { return name_; }
  void use() const;

  // Uniform location, -1 when the program has no active uniform of that name (the driver removes
  // unused ones; setting those is a silent no-op, as in GL).
  int location(const std::string& uniform) const;
  // Set through glProgramUniform*: the program need not be in use.
  void set(const std::string& uniform, int v) const;
  void set(const std::string& uniform, float v) const;
  void set(const std::string& uniform, const glm::vec3& v) const;
  void set(const std::string& uniform, const glm::mat4& m) const;

 private:
  unsigned int id_ = 0;
  std::string name_;
  mutable std::unordered_map<std::string, int> locations_;
};

}  // namespace murmur::render
