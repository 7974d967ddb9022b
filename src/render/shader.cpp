#include "render/shader.h"

#include <glad/gl.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <glm/gtc/type_ptr.hpp>

namespace murmur::render {
namespace {

#include "render/embedded_shaders.inc"

const char* stageName(unsigned int type) {
  switch (type) {
    case GL_VERTEX_SHADER: return "vertex";
    case GL_GEOMETRY_SHADER: return "geometry";
    case GL_FRAGMENT_SHADER: return "fragment";
    case GL_COMPUTE_SHADER: return "compute";
    case GL_TESS_CONTROL_SHADER: return "tessellation control";
    case GL_TESS_EVALUATION_SHADER: return "tessellation evaluation";
    default: return "unknown";
  }
}

// `#include "name"` on a line of its own: returns the name, or an empty string.
std::string includeTarget(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line.compare(i, 8, "#include") != 0) return {};
  size_t open = line.find('"', i + 8);
  size_t close = open == std::string::npos ? open : line.find('"', open + 1);
  if (close == std::string::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

// Expands #include lines. Each file gets a GLSL source-string number (its index in `files`), and
// #line directives switch to it and back, so a driver message "1:12(5)" means line 12 of files[1].
void expandIncludes(const std::string& text, int fileIndex, const ShaderSource* includes,
                    std::vector<std::string>& files, std::string& out, int depth) {
  if (depth > 8) {
    throw std::runtime_error("shader " + files[static_cast<size_t>(fileIndex)] +
                             ": #include nested too deeply (a cycle?)");
  }
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::string target = includeTarget(line);
    if (target.empty()) {
      out += line;
      out += '\n';
      continue;
    }
    const std::string& self = files[static_cast<size_t>(fileIndex)];
    if (!includes) {
      throw std::runtime_error("shader " + self + ":" + std::to_string(lineNo) + ": #include \"" +
                               target + "\" but no shader source to resolve it");
    }
    const int childIndex = static_cast<int>(files.size());
    files.push_back(target);
    out += "#line 1 " + std::to_string(childIndex) + "\n";
    expandIncludes(includes->load(target), childIndex, includes, files, out, depth + 1);
    // GLSL 4.50: the line after "#line L S" is line L of source string S.
    out += "#line " + std::to_string(lineNo + 1) + " " + std::to_string(fileIndex) + "\n";
  }
}

std::string shaderLog(GLuint shader) {
  GLint length = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<size_t>(length > 0 ? length : 0), '\0');
  if (length > 0) glGetShaderInfoLog(shader, length, nullptr, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::string programLog(GLuint program) {
  GLint length = 0;
  glGetProgramiv(program, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<size_t>(length > 0 ? length : 0), '\0');
  if (length > 0) glGetProgramInfoLog(program, length, nullptr, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::string defaultDirectory() {
#if defined(MURMUR_SHADER_DIR)
  return MURMUR_SHADER_DIR;
#else
  return {};
#endif
}

}  // namespace

ShaderSource::ShaderSource() : directory_(defaultDirectory()) {}
ShaderSource::ShaderSource(std::string directory) : directory_(std::move(directory)) {}

std::string ShaderSource::load(const std::string& file) const {
  if (!directory_.empty()) {
    const std::string path = directory_ + "/" + file;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read shader file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  for (const EmbeddedShader& s : kEmbeddedShaders) {
    if (file == s.name) return s.text;
  }
  std::string known;
  for (const EmbeddedShader& s : kEmbeddedShaders) known += (known.empty() ? "" : ", ") + std::string(s.name);
  throw std::runtime_error("no embedded shader named " + file + " (embedded: " + known + ")");
}

std::vector<std::string> embeddedShaderNames() {
  std::vector<std::string> names;
  for (const EmbeddedShader& s : kEmbeddedShaders) names.emplace_back(s.name);
  return names;
}

unsigned int compileShader(unsigned int type, const std::string& file, const std::string& text,
                           const ShaderSource* includes) {
  std::vector<std::string> files{file};
  std::string expanded;
  expandIncludes(text, 0, includes, files, expanded, 0);

  GLuint shader = glCreateShader(type);
  if (shader == 0) {
    throw std::runtime_error("shader " + file + ": glCreateShader(" + stageName(type) +
                             ") failed; is an OpenGL 4.5 context current?");
  }
  const char* src = expanded.c_str();
  glShaderSource(shader, 1, &src, nullptr);
  glCompileShader(shader);
  GLint ok = GL_FALSE;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (ok != GL_TRUE) {
    std::string msg = "shader " + file + " (" + stageName(type) + ") failed to compile:\n" + shaderLog(shader);
    if (files.size() > 1) {
      msg += "\n(source string numbers in the log:";
      for (size_t i = 0; i < files.size(); ++i) {
        msg += (i == 0 ? " " : ", ") + std::to_string(i) + " = " + files[i];
      }
      msg += ")";
    }
    glDeleteShader(shader);
    throw std::runtime_error(msg);
  }
  return shader;
}

ShaderProgram ShaderProgram::build(const ProgramDesc& desc, const ShaderSource& source) {
  std::vector<GLuint> shaders;
  auto deleteShaders = [&] {
    for (GLuint s : shaders) glDeleteShader(s);
  };
  std::string fileList;
  try {
    for (const ShaderStage& stage : desc.stages) {
      shaders.push_back(compileShader(stage.type, stage.file, source.load(stage.file), &source));
      fileList += (fileList.empty() ? "" : ", ") + stage.file;
    }
  } catch (...) {
    deleteShaders();
    throw;
  }

  ShaderProgram program;
  program.name_ = desc.name;
  program.id_ = glCreateProgram();
  for (GLuint s : shaders) glAttachShader(program.id_, s);
  glLinkProgram(program.id_);
  // Shaders are no longer needed once linked (or once linking failed).
  for (GLuint s : shaders) glDetachShader(program.id_, s);
  deleteShaders();
  GLint ok = GL_FALSE;
  glGetProgramiv(program.id_, GL_LINK_STATUS, &ok);
  if (ok != GL_TRUE) {
    throw std::runtime_error("shader program " + desc.name + " (" + fileList + ") failed to link:\n" +
                             programLog(program.id_));
  }
  return program;
}

ShaderProgram::~ShaderProgram() {
  if (id_) glDeleteProgram(id_);
}

ShaderProgram::ShaderProgram(ShaderProgram&& other) noexcept
    : id_(std::exchange(other.id_, 0u)),
      name_(std::move(other.name_)),
      locations_(std::move(other.locations_)) {}

ShaderProgram& ShaderProgram::operator=(ShaderProgram&& other) noexcept {
  if (this != &other) {
    if (id_) glDeleteProgram(id_);
    id_ = std::exchange(other.id_, 0u);
    name_ = std::move(other.name_);
    locations_ = std::move(other.locations_);
  }
  return *this;
}

void ShaderProgram::use() const { glUseProgram(id_); }

int ShaderProgram::location(const std::string& uniform) const {
  auto it = locations_.find(uniform);
  if (it != locations_.end()) return it->second;
  const int loc = glGetUniformLocation(id_, uniform.c_str());
  locations_.emplace(uniform, loc);
  return loc;
}

void ShaderProgram::set(const std::string& uniform, int v) const {
  glProgramUniform1i(id_, location(uniform), v);
}
void ShaderProgram::set(const std::string& uniform, float v) const {
  glProgramUniform1f(id_, location(uniform), v);
}
void ShaderProgram::set(const std::string& uniform, const glm::vec3& v) const {
  glProgramUniform3fv(id_, location(uniform), 1, glm::value_ptr(v));
}
void ShaderProgram::set(const std::string& uniform, const glm::mat4& m) const {
  glProgramUniformMatrix4fv(id_, location(uniform), 1, GL_FALSE, glm::value_ptr(m));
}

}  // namespace murmur::render
