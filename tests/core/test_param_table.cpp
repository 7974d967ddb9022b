// The parameter table: every row describes a field that exists, its default is allowed, its
// names are unique, and the value grammar rejects what a person would not mean.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/param_table.h"

using namespace murmur::core;

TEST(ParamTable, RowsAreUniqueAndDefaultsAllowed) {
  std::set<std::string> keys, options;
  const SimParams def = defaultParams();
  for (const ParamDesc& d : paramTable()) {
    EXPECT_TRUE(keys.insert(d.key).second) << d.key;
    EXPECT_TRUE(options.insert(d.option).second) << d.option;
    EXPECT_EQ(std::string(d.option).rfind("--", 0), 0u) << d.option;
    EXPECT_TRUE(allowed(d.spec, d.get(def))) << d.key << " default " << d.get(def);
    EXPECT_EQ(findParam(d.key), &d);
    if (d.panelLo != d.panelHi) {
      EXPECT_TRUE(allowed(d.spec, d.panelLo)) << d.key;
      EXPECT_TRUE(allowed(d.spec, d.panelHi)) << d.key;
    }
  }
}

TEST(ParamTable, EachRowReadsAndWritesItsOwnField) {
  // Setting one row to another allowed value changes that row only.
  for (const ParamDesc& d : paramTable()) {
    SimParams p = defaultParams();
    const double before = d.get(p);
    double other = before;
    for (double candidate : {before + 1.0, before * 0.5, before + d.spec.multipleOf, before - 1.0, 0.0, 1.0})
      if (candidate != before && allowed(d.spec, candidate)) other = candidate;
    ASSERT_NE(other, before) << d.key;
    d.set(p, other);
    EXPECT_EQ(d.get(p), static_cast<double>(static_cast<float>(other))) << d.key;
    for (const ParamDesc& e : paramTable()) {
      if (&e != &d) {
        EXPECT_EQ(e.get(p), e.get(defaultParams())) << d.key << " changed " << e.key;
      }
    }
  }
}

// Every number has an upper bound: without one, --alignment-scale 1e30 ran and the speed clamp
// turned the overflowing velocity into a standstill. For each row the bound itself is taken; ten
// times it (plus one) and 1e30 are refused with a line naming the option, the value and the bound,
// and validateParams refuses the field set past it by its key.
TEST(ParamTable, EveryNumberHasAnUpperBound) {
  for (const ParamDesc& d : paramTable()) {
    if (d.spec.type == ValueType::Enum) continue;
    SCOPED_TRACE(d.key);
    const double hi = d.spec.hi;
    ASSERT_LE(hi, 1e7);  // a float row without a bound has hi = 3e38
    const std::string hiText = formatValue(d, hi);
    double v = 0;
    EXPECT_TRUE(parseValue(d.spec, hiText, v)) << hiText;
    EXPECT_EQ(v, hi);
    for (const std::string& text : {formatValue(d, 10 * hi + 1), std::string("1e30")}) {
      EXPECT_FALSE(parseValue(d.spec, text, v)) << text;
      const std::string msg = invalidValueMessage(d.option, text, d.label, d.spec);
      EXPECT_EQ(msg.rfind(std::string(d.option) + " " + text + " is invalid: " + d.label + " must be ", 0), 0u) << msg;
      const std::string tail = " " + hiText;  // "... and at most 1", "... from 1 to 128"
      EXPECT_TRUE(msg.size() > tail.size() && msg.compare(msg.size() - tail.size(), tail.size(), tail) == 0) << msg;
    }
    SimParams p = defaultParams();
    d.set(p, 10 * hi + 1);
    const std::string err = validateParams(p);
    EXPECT_EQ(err.rfind(std::string(d.key) + " = ", 0), 0u) << err;
  }
  EXPECT_EQ(invalidValueMessage("--alignment-scale", "1e30", findParam("boids.alignmentScale")->label,
                                findParam("boids.alignmentScale")->spec),
            "--alignment-scale 1e30 is invalid: alignment s3 must be a finite number >= 0 and at most 1");
}

TEST(ParamTable, ValueGrammar) {
  double v = 0;
  const ValueSpec f = floatAbove(0);
  for (const char* ok : {"0.25", "1", "1e-3", ".5", "2.", "3E2"}) EXPECT_TRUE(parseValue(f, ok, v)) << ok;
  for (const char* bad : {"", " 1", "1 ", "0x1p3", "inf", "nan", "1e40", "0", "-1", "1,5", "--1", "1e"})
    EXPECT_FALSE(parseValue(f, bad, v)) << bad;
  const ValueSpec i = intRange(32, 1024, 32);
  EXPECT_TRUE(parseValue(i, "64", v));
  EXPECT_EQ(v, 64);
  for (const char* bad : {"48", "64.0", "99999999999999999999", "18446744073709551680", "", "6 4"})
    EXPECT_FALSE(parseValue(i, bad, v)) << bad;
  const ValueSpec c = countRange(1, 1u << 30);
  EXPECT_TRUE(parseValue(c, "25k", v));
  EXPECT_EQ(v, 25000);
  EXPECT_TRUE(parseValue(c, "1M", v));
  EXPECT_EQ(v, 1e6);
  for (const char* bad : {"0", "1.5k", "-5", "2000M", "k"}) EXPECT_FALSE(parseValue(c, bad, v)) << bad;
  const ValueSpec e = enumSpec<Pipeline>();
  EXPECT_TRUE(parseValue(e, "scattered", v));
  EXPECT_EQ(v, 1);
  EXPECT_FALSE(parseValue(e, "Scattered", v));
  EXPECT_EQ(allowedText(e), "one of: naive, scattered, coherent, rows, tree, verlet, clusters");
  EXPECT_EQ(invalidValueMessage("--block-size", "48", "block size", i),
            "--block-size 48 is invalid: block size must be a multiple of 32 from 32 to 1024");
  // A limit is written in full, not rounded (the seed's 2^53 read as 9.0072e+15).
  EXPECT_EQ(allowedText(intRange(0, 1LL << 53)), "a whole number from 0 to 9007199254740992");
}
