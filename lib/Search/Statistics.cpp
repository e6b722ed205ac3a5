//===- Statistics.cpp - Significance tests on repeated timings ------------===//

#include "ke/Search/Statistics.h"

#include <boost/math/distributions/students_t.hpp>

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>

using namespace ke;

// ke builds without exceptions (as LLVM does): Boost.Math then reports
// domain errors through these. Callers pass only valid arguments, so
// reaching one is a bug in ke.
namespace boost {
void throw_exception(const std::exception &e) {
  llvm::report_fatal_error(llvm::Twine("Boost.Math: ") + e.what());
}
void throw_exception(const std::exception &e,
                                  const boost::source_location &) {
  throw_exception(e);
}
} // namespace boost

namespace {
struct Moments {
  double mean = 0, variance = 0;
  size_t n = 0;
};

Moments momentsOf(llvm::ArrayRef<double> values) {
  Moments m;
  m.n = values.size();
  for (double v : values)
    m.mean += v;
  m.mean /= double(m.n);
  for (double v : values)
    m.variance += (v - m.mean) * (v - m.mean);
  m.variance /= double(m.n - 1); // unbiased; callers ensure n >= 2
  return m;
}
} // namespace

double ke::welchLessPValue(llvm::ArrayRef<double> a, llvm::ArrayRef<double> b) {
  if (a.size() < 2 || b.size() < 2)
    return 1;
  Moments x = momentsOf(a), y = momentsOf(b);
  double va = x.variance / double(x.n), vb = y.variance / double(y.n);
  double se2 = va + vb;
  if (se2 <= 0)
    return x.mean < y.mean ? 0 : 1;
  double t = (x.mean - y.mean) / std::sqrt(se2);
  // Welch-Satterthwaite degrees of freedom.
  double df = se2 * se2 /
              (va * va / double(x.n - 1) + vb * vb / double(y.n - 1));
  boost::math::students_t distribution(df);
  return boost::math::cdf(distribution, t); // P(T <= t): small when a << b
}
