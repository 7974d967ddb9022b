// Included first by every header of src/render: core and cuda must not depend on the renderer.
#pragma once
#if defined(MURMUR_MODULE_CORE)
#error "src/core must not include src/render headers (dependencies run app -> render -> core)"
#endif
#if defined(MURMUR_MODULE_CUDA) && !defined(MURMUR_ALLOW_INTEROP)
#error "src/cuda must not include src/render headers except through the interop buffer"
#endif
