// Host/device portability for the physics that the CPU engine and the CUDA kernels share.
// Compiles as plain C++17 when not under nvcc; no CUDA header is included here.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define MURMUR_HD __host__ __device__ __forceinline__
#else
#define MURMUR_HD inline
#endif

namespace murmur::core {

// A load from a buffer that the running kernel never writes: the read-only data cache on the GPU
// (__ldg), a plain load on the host, so that shared loops read the same on both.
template <typename T>
MURMUR_HD T loadReadOnly(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

// Layout-compatible with CUDA's float4 (16 bytes, 16-byte aligned) so kernels load it with one
// 128-bit access and the CUDA engine may reinterpret a Vec4 buffer as float4.
struct alignas(16) Vec4 {
  float x, y, z, w;
};

struct Vec3 {
  float x, y, z;
};

MURMUR_HD Vec3 make3(float x, float y, float z) { return Vec3{x, y, z}; }
MURMUR_HD Vec3 xyz(const Vec4& v) { return Vec3{v.x, v.y, v.z}; }
MURMUR_HD Vec4 make4(const Vec3& v, float w) { return Vec4{v.x, v.y, v.z, w}; }
MURMUR_HD Vec3 operator+(Vec3 a, Vec3 b) { return Vec3{a.x + b.x, a.y + b.y, a.z + b.z}; }
MURMUR_HD Vec3 operator-(Vec3 a, Vec3 b) { return Vec3{a.x - b.x, a.y - b.y, a.z - b.z}; }
MURMUR_HD Vec3 operator*(Vec3 a, float s) { return Vec3{a.x * s, a.y * s, a.z * s}; }
MURMUR_HD Vec3& operator+=(Vec3& a, Vec3 b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
  return a;
}
MURMUR_HD float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
MURMUR_HD float length(Vec3 a) { return sqrtf(dot(a, a)); }

MURMUR_HD float rsqrtHD(float x) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

// v / |v|, or 0 for v = 0.
MURMUR_HD Vec3 unitOrZero(const Vec3& v) {
  const float s2 = dot(v, v);
  return s2 > 0.0f ? v * rsqrtHD(s2) : Vec3{0, 0, 0};
}

MURMUR_HD Vec3 cross(const Vec3& a, const Vec3& b) {
  return Vec3{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

// e1, e2: an orthonormal pair perpendicular to the unit vector e3 (from the axis least aligned
// with it), the frame the rules turn a heading in.
MURMUR_HD void perpendiculars(const Vec3& e3, Vec3& e1, Vec3& e2) {
  const Vec3 axis = fabsf(e3.x) < 0.9f ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
  e1 = unitOrZero(cross(e3, axis));
  e2 = cross(e3, e1);
}

// A product and a sum rounded on their own, as the host computes them. nvcc fuses a*b+c into one
// FMA (one rounding) unless told not to; where a result feeds a discontinuous decision (is j a
// neighbour, which cell, does a body wrap) every engine must round it alike, so those
// expressions spell their roundings out and the kernels around them may contract freely.
MURMUR_HD float mulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
MURMUR_HD float addRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

MURMUR_HD int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

}  // namespace murmur::core
