// Measurements on a body state: checksums, conserved quantities, and the accuracy of an
// approximate force field against a double-precision direct sum.
#pragma once

#include <cstdint>
#include <vector>

#include "core/bodies.h"

namespace murmur::core {

// FNV-1a over the bytes of pos and vel in id order: equal states give equal checksums.
uint64_t stateChecksum(const Bodies& b);

struct Vec3d {
  double x = 0, y = 0, z = 0;
};

Vec3d totalMomentum(const Bodies& b);
// Bodies (matched by index, both states in id order) that crossed a face of the wrapped boids
// world between two states: some coordinate moved by more than halfSize.
size_t countWrapped(const Bodies& before, const Bodies& after, float halfSize);
double totalMass(const Bodies& b);

// Kinetic + softened potential energy, U = -G sum_{i<j} m_i m_j / sqrt(r^2 + eps^2), in double.
// O(N^2): for tests and small reports.
double totalEnergy(const Bodies& b, double G, double softening);

// a_i = G sum_j m_j r_ij / (r^2 + eps^2)^(3/2) in double (OpenMP over i). O(N^2).
std::vector<Vec3d> directAccelerations(const Bodies& b, double G, double softening);

// Relative error |a - a_ref| / |a_ref| per body, summarised. `sample` limits the reference to
// every k-th body (k = ceil(N / sample)) so that large N stays affordable.
struct ForceError {
  double median = 0, p90 = 0, max = 0, rms = 0;
  size_t samples = 0;
};
ForceError forceError(const Bodies& b, const std::vector<Vec4>& approx, double G, double softening,
                      size_t sample = 4096);

}  // namespace murmur::core
