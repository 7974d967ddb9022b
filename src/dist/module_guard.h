// Included first by every header of src/dist: the decomposition over several ranks sits above
// core and cuda, and neither may depend on it (dependencies run app -> dist -> cuda -> core).
#pragma once
#if defined(MURMUR_MODULE_CORE)
#error "src/core must not include src/dist headers (dependencies run app -> dist -> core)"
#endif
#if defined(MURMUR_MODULE_CUDA)
#error "src/cuda must not include src/dist headers (dependencies run app -> dist -> cuda)"
#endif
#if defined(MURMUR_MODULE_RENDER)
#error "src/render must not include src/dist headers (the renderer draws any engine's state)"
#endif
