# Finds every dependency from Debian packages and fails with a message that names the package to
# install. Nothing is downloaded at build time.

find_package(PkgConfig QUIET)

macro(murmur_missing what debpkg)
  message(FATAL_ERROR "Murmuration: ${what} not found. Install the Debian package: "
                      "sudo apt-get install ${debpkg}   (or run scripts/install-deps.sh)")
endmacro()

find_package(OpenMP COMPONENTS CXX)
if(NOT OpenMP_CXX_FOUND)
  murmur_missing("OpenMP for C++" "libomp-dev (or g++ with libgomp)")
endif()
find_package(Threads REQUIRED)

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  murmur_missing("CLI11" libcli11-dev)
endif()

find_package(nlohmann_json CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  murmur_missing("nlohmann_json" nlohmann-json3-dev)
endif()

find_package(glm CONFIG QUIET)
if(NOT glm_FOUND)
  murmur_missing("GLM" libglm-dev)
endif()

# The renderer and the window viewer's libraries; a build without them (MURMUR_ENABLE_RENDER=OFF:
# the engines, the headless runs without pictures, the Python module) needs none of them.
if(MURMUR_ENABLE_RENDER)
  find_package(glfw3 CONFIG QUIET)
  if(NOT glfw3_FOUND)
    murmur_missing("GLFW 3" libglfw3-dev)
  endif()

  find_package(OpenGL QUIET COMPONENTS OpenGL EGL)
  if(NOT OpenGL_EGL_FOUND OR NOT OpenGL_OpenGL_FOUND)
    murmur_missing("EGL / OpenGL (libglvnd)" "libegl-dev libgl-dev")
  endif()

  # A Debian library without a CMake config: its header (under `suffix`) and library, as an
  # INTERFACE target `target` that links `lib` and the targets after it.
  function(murmur_header_library target header suffix lib what debpkg)
    string(TOUPPER ${lib} up)
    find_path(MURMUR_${up}_INCLUDE ${header} PATH_SUFFIXES ${suffix})
    find_library(MURMUR_${up}_LIB ${lib})
    if(NOT MURMUR_${up}_INCLUDE OR NOT MURMUR_${up}_LIB)
      murmur_missing("${what}" ${debpkg})
    endif()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${MURMUR_${up}_INCLUDE})
    target_link_libraries(${target} INTERFACE ${MURMUR_${up}_LIB} ${ARGN})
    set(MURMUR_${up}_INCLUDE ${MURMUR_${up}_INCLUDE} PARENT_SCOPE)
  endfunction()
  murmur_header_library(murmur_stb stb_image_write.h stb stb "stb (stb_image_write.h, libstb)" libstb-dev)
  # Debian's libimgui-dev ships libimgui.a with the GLFW and OpenGL3 backends compiled in.
  murmur_header_library(murmur_imgui imgui.h imgui imgui "Dear ImGui" libimgui-dev
                        murmur_stb glfw OpenGL::GL ${CMAKE_DL_LIBS})
  target_include_directories(murmur_imgui INTERFACE ${MURMUR_IMGUI_INCLUDE}/backends)
endif()

# Trajectories (--trajectory, file:run.h5): the HDF5 C library. Optional: without it the build
# has no trajectories and says so.
find_package(HDF5 QUIET COMPONENTS C)
if(HDF5_FOUND)
  set(MURMUR_HAVE_HDF5 ON)
else()
  set(MURMUR_HAVE_HDF5 OFF)
  message(STATUS "HDF5 not found: building without trajectories (--trajectory, file:run.h5); "
                 "install the Debian package libhdf5-dev (or run scripts/install-deps.sh) for them")
endif()

if(MURMUR_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    find_package(GTest QUIET)
  endif()
  if(NOT GTest_FOUND)
    murmur_missing("GoogleTest" libgtest-dev)
  endif()
endif()

# Warnings are errors in our own code (not glad, not system or toolkit headers). One function so that
# every target of ours gets the same set: C++ through the host compiler, CUDA through nvcc (its own
# warnings) and the host compiler it drives.
option(MURMUR_WERROR "Treat warnings in Murmuration's own code as errors" ON)
function(murmur_warnings target)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    return()
  endif()
  set(flags -Wall -Wextra -Wshadow)
  if(MURMUR_WERROR)
    list(APPEND flags -Werror)
  endif()
  list(JOIN flags "," host_flags)
  set(cuda_flags "-Xcompiler=${host_flags}")
  if(MURMUR_WERROR)
    list(APPEND cuda_flags "-Werror=all-warnings")
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${flags}>
                                           $<$<COMPILE_LANGUAGE:CUDA>:${cuda_flags}>)
endfunction()
