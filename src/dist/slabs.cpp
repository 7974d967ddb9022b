#include "dist/slabs.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace murmur::dist {

namespace {

void checkShape(int numRanks, int numColumns) {
  if (numRanks < 1 || numRanks > kMaxRanks)
    throw std::invalid_argument("ranks " + std::to_string(numRanks) + ": allowed 1.." + std::to_string(kMaxRanks));
  if (numColumns < numRanks)
    throw std::invalid_argument("ranks " + std::to_string(numRanks) + ": the boids grid has only " +
                                std::to_string(numColumns) +
                                " cell columns along x; each rank needs at least one (fewer ranks or a larger world)");
}

}  // namespace

SlabLayout evenSlabs(int numRanks, int numColumns) {
  checkShape(numRanks, numColumns);
  SlabLayout l{};
  l.numRanks = numRanks;
  l.numColumns = numColumns;
  for (int r = 0; r <= numRanks; ++r)
    l.start[r] = static_cast<int>(static_cast<long long>(numColumns) * r / numRanks);
  return l;
}

SlabLayout balancedSlabs(const std::vector<uint64_t>& perColumn, int numRanks) {
  const int numColumns = static_cast<int>(perColumn.size());
  checkShape(numRanks, numColumns);
  uint64_t total = 0;
  for (uint64_t c : perColumn) total += c;
  if (total == 0) return evenSlabs(numRanks, numColumns);
  SlabLayout l{};
  l.numRanks = numRanks;
  l.numColumns = numColumns;
  l.start[0] = 0;
  l.start[numRanks] = numColumns;
  // Cut r goes after the first column where the running count reaches r/K of the total, kept
  // inside [previous cut + 1, columns - (ranks left)] so no slab is empty.
  uint64_t running = 0;
  int c = 0;
  for (int r = 1; r < numRanks; ++r) {
    const double target = double(total) * r / numRanks;
    while (c < numColumns && double(running + perColumn[static_cast<size_t>(c)]) <= target) {
      running += perColumn[static_cast<size_t>(c)];
      ++c;
    }
    // Column c straddles the target: cut on the side closer to it.
    int cut = c;
    if (c < numColumns && target - double(running) > double(running + perColumn[static_cast<size_t>(c)]) - target)
      cut = c + 1;
    cut = std::max(cut, l.start[r - 1] + 1);
    cut = std::min(cut, numColumns - (numRanks - r));
    l.start[r] = cut;
    while (c < cut) running += perColumn[static_cast<size_t>(c++)];
    while (c > cut) running -= perColumn[static_cast<size_t>(--c)];
  }
  return l;
}

double imbalance(const SlabLayout& l, const std::vector<uint64_t>& perColumn) {
  uint64_t total = 0, most = 0;
  for (int r = 0; r < l.numRanks; ++r) {
    uint64_t owned = 0;
    for (int c = l.start[r]; c < l.start[r + 1]; ++c) owned += perColumn[static_cast<size_t>(c)];
    total += owned;
    most = std::max(most, owned);
  }
  return total == 0 ? 1.0 : double(most) * l.numRanks / double(total);
}

}  // namespace murmur::dist
