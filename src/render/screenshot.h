// PNG screenshots of rendered frames.
#pragma once
#include "render/module_guard.h"

#include <cstdint>
#include <string>
#include <vector>

namespace murmur::render {

// Writes width x height RGBA8 pixels, top row first (as Renderer::readPixels returns them), to
// `path` as a PNG. Throws std::runtime_error naming the path when the pixel count does not match
// the size or the file cannot be written.
void writePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba);

}  // namespace murmur::render
