# Build step (cmake -P): turns GLSL files into one generated header of string literals, so that the
# binaries carry their shaders and run from any directory.
#   -DSHADER_DIR=<dir>  -DSHADERS=<a.vert,b.frag,...>  -DOUTPUT=<file.inc>
# The header defines `kEmbeddedShaders[]`, an array of {name, text} pairs, and is included by exactly
# one translation unit (shader.cpp), inside namespace murmur::render.
# Raw string literals keep the GLSL readable in the generated file; the delimiter below must not
# occur in any shader.

if(NOT SHADER_DIR OR NOT SHADERS OR NOT OUTPUT)
  message(FATAL_ERROR "embed_shaders.cmake needs SHADER_DIR, SHADERS and OUTPUT")
endif()

set(delimiter "murmur_glsl")
string(REPLACE "," ";" shader_list "${SHADERS}")
set(body "// Generated at build time from shaders/ by src/render/embed_shaders.cmake. Do not edit.\n")
string(APPEND body "// NOLINTBEGIN\n")
string(APPEND body "struct EmbeddedShader {\n  const char* name;\n  const char* text;\n};\n\n")
string(APPEND body "constexpr EmbeddedShader kEmbeddedShaders[] = {\n")
foreach(name IN LISTS shader_list)
  set(path "${SHADER_DIR}/${name}")
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "embed_shaders.cmake: shader file not found: ${path}")
  endif()
  file(READ "${path}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "embed_shaders.cmake: ${path} contains the raw-string delimiter ${delimiter}")
  endif()
  string(APPEND body "    {\"${name}\", R\"${delimiter}(${text})${delimiter}\"},\n")
endforeach()
string(APPEND body "};\n// NOLINTEND\n")

# Always written: the build tool reruns this step whenever the output is older than a shader.
file(WRITE "${OUTPUT}" "${body}")
