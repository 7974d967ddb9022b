// PNG screenshots of rendered frames.
#pragma once
#include "render/module_guard.h"

#include <cstdint>
#include <string>
#include <vector>

namespace murmur::render {

// Writes width x height RGBA8 pixels, top row first (as Renderer::readPixels returns them), to
// `path` as a PNG, atomically (core/atomic_file.h). Throws std::runtime_error naming the path when
// the pixel count does not match the size, core::UsageError when the file cannot be created and
// core::WriteError when writing fails. `option` names the file in messages.
void writePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba,
              const std::string& option = "--screenshot");

}  // namespace murmur::render
