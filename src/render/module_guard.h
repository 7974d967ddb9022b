// Included first by every header of src/render: core and cuda must not depend on the renderer.
// (The CUDA-GL interop buffer in src/cuda takes GL buffer names as plain unsigned ints, so it
// needs no render header either.)
#pragma once
#if defined(MURMUR_MODULE_CORE)
#error "src/core must not include src/render headers (dependencies run app -> render -> core)"
#endif
#if defined(MURMUR_MODULE_CUDA)
#error "src/cuda must not include src/render headers (the interop buffer takes plain GL names)"
#endif
