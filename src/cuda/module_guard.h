// Included first by every header of src/cuda: core code must not depend on the CUDA engine.
#pragma once
#if defined(MURMUR_MODULE_CORE)
#error "src/core must not include src/cuda headers (dependencies run app -> cuda -> core)"
#endif
