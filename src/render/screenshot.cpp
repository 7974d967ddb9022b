#include "render/screenshot.h"

// The implementation lives in Debian's libstb (linked through murmur_stb): no
// STB_IMAGE_WRITE_IMPLEMENTATION here, or its symbols would be defined twice.
#include <stb_image_write.h>

#include <stdexcept>

#include "core/atomic_file.h"

namespace murmur::render {

void writePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba,
              const std::string& option) {
  if (width <= 0 || height <= 0 ||
      rgba.size() != static_cast<size_t>(width) * static_cast<size_t>(height) * 4) {
    throw std::runtime_error("cannot write " + path + ": " + std::to_string(rgba.size()) +
                             " bytes of pixels do not match the size " + std::to_string(width) + "x" +
                             std::to_string(height) + " (RGBA)");
  }
  // Rows are already top first, so stb's global flip flag (shared by the whole process) stays unused.
  // Encoded in memory, then written atomically: a full disk leaves no truncated PNG behind.
  std::string png;
  auto append = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, width, height, 4, rgba.data(), width * 4))
    throw std::runtime_error("cannot encode the PNG for " + path);
  core::writeFileAtomically(option, path, png);
}

}  // namespace murmur::render
