//===- RuntimeTest.cpp - Buffers, child processes, measurement ------------===//

#include "ke/Runtime/ChildProcess.h"
#include "ke/Runtime/HostBuffer.h"
#include "ke/Runtime/Measurement.h"
#include "ke/Runtime/ServingChild.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cmath>
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

using namespace ke;

namespace {

TEST(HostBufferTest, HalfAndBFloatConversions) {
  for (float v : {0.0f, 1.0f, -2.5f, 0.1f, 65504.0f, 6.1035156e-05f})
    EXPECT_NEAR(halfBitsToFloat(floatToHalfBits(v)), v, std::abs(v) * 1e-3)
        << v;
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalfBits(1e6f), 0x7C00); // overflow to infinity
  EXPECT_EQ(floatToBFloatBits(1.0f), 0x3F80);
  EXPECT_EQ(bfloatBitsToFloat(0x3F80), 1.0f);
  // Round to nearest even: 1 + 2^-8 is halfway between two bf16 values.
  EXPECT_EQ(floatToBFloatBits(1.00390625f), 0x3F80);
  EXPECT_EQ(floatToBFloatBits(1.01171875f), 0x3F82);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(NAN))));
}

TEST(HostBufferTest, RandomFillIsSeededAndNonZero) {
  for (ElementKind kind : {ElementKind::F32, ElementKind::F16, ElementKind::BF16,
                           ElementKind::I32, ElementKind::I8}) {
    HostBuffer a({8, 16}, kind), b({8, 16}, kind), c({8, 16}, kind);
    a.fillRandom(1);
    b.fillRandom(1);
    c.fillRandom(2);
    bool differs = false;
    for (int64_t i = 0; i < a.getNumElements(); ++i) {
      EXPECT_EQ(a.getAsDouble(i), b.getAsDouble(i));
      EXPECT_NE(a.getAsDouble(i), 0.0);
      EXPECT_LE(std::abs(a.getAsDouble(i)), 8.0);
      differs |= a.getAsDouble(i) != c.getAsDouble(i);
    }
    EXPECT_TRUE(differs) << stringifyElementKind(kind).str();
  }
}

TEST(HostBufferTest, PoisonNeverPassesTheCheck) {
  HostBuffer expected({4, 4}, ElementKind::F32), actual({4, 4}, ElementKind::F32);
  expected.fillRandom(3);
  actual.copyFrom(expected);
  EXPECT_EQ(relativeL2Error(actual, expected), 0.0);
  actual.poison();
  EXPECT_TRUE(std::isinf(relativeL2Error(actual, expected)));
  HostBuffer ints({16}, ElementKind::I32), intsExpected({16}, ElementKind::I32);
  intsExpected.fillRandom(4);
  ints.poison();
  EXPECT_GT(relativeL2Error(ints, intsExpected), getTolerance(ElementKind::I32));
}

TEST(HostBufferTest, RelativeErrorAndTolerances) {
  HostBuffer expected({2}, ElementKind::F64), actual({2}, ElementKind::F64);
  static_cast<double *>(expected.getData())[0] = 3;
  static_cast<double *>(expected.getData())[1] = 4;
  static_cast<double *>(actual.getData())[0] = 3;
  static_cast<double *>(actual.getData())[1] = 4.5;
  EXPECT_DOUBLE_EQ(relativeL2Error(actual, expected), 0.5 / 5.0);
  EXPECT_EQ(getTolerance(ElementKind::F32), 1e-4);
  EXPECT_GT(getTolerance(ElementKind::BF16), getTolerance(ElementKind::F16));
  EXPECT_EQ(getTolerance(ElementKind::I8), 0.0);
}

TEST(HostBufferTest, DescriptorIsRowMajor) {
  HostBuffer buffer({2, 3, 4}, ElementKind::F32);
  auto *d = static_cast<int64_t *>(buffer.getDescriptor());
  EXPECT_EQ(reinterpret_cast<void *>(d[1]), buffer.getData());
  EXPECT_EQ(d[2], 0);                                           // offset
  EXPECT_EQ((std::vector<int64_t>{d[3], d[4], d[5]}), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ((std::vector<int64_t>{d[6], d[7], d[8]}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.getData()) % 64, 0u);
}

TEST(ChildProcessTest, ReportAndExitCode) {
  ChildResult r = runInChild(
      [](llvm::raw_ostream &os) {
        os << "hello";
        return 3;
      },
      10);
  EXPECT_EQ(r.status, ChildResult::Status::Exited);
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_EQ(r.report, "hello");
  EXPECT_FALSE(r.succeeded());
}

TEST(ChildProcessTest, CrashIsASignalNotTheEndOfTheParent) {
  ChildResult r = runInChild(
      [](llvm::raw_ostream &) {
        raise(SIGSEGV);
        return 0;
      },
      10);
  EXPECT_EQ(r.status, ChildResult::Status::Signaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.describe().find("signal 11"), std::string::npos);
}

TEST(ChildProcessTest, HangIsKilledAtTheLimit) {
  ChildResult r = runInChild(
      [](llvm::raw_ostream &) {
        for (;;)
          pause();
        return 0;
      },
      0.3);
  EXPECT_EQ(r.status, ChildResult::Status::TimedOut);
  EXPECT_LT(r.seconds, 5.0);
}

/// A file in a fresh temporary directory of this test.
static std::string tempPath(llvm::StringRef name) {
  static llvm::SmallString<128> dir;
  if (dir.empty())
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("ke-pipeline", dir));
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// Waits up to 5 s for `path` to exist.
static bool waitForFile(const std::string &path) {
  for (int i = 0; i < 500; ++i) {
    if (llvm::sys::fs::exists(path))
      return true;
    usleep(10000);
  }
  return false;
}

TEST(ChildPipelineTest, OutcomesInOrderAndFailedBuildsNotMeasured) {
  std::vector<std::string> events;
  runBuildAndMeasure(
      6, 3,
      [](unsigned i) {
        return ChildJob{[i](llvm::raw_ostream &os) {
                          if (i == 2)
                            raise(SIGSEGV);
                          if (i == 4)
                            for (;;)
                              pause();
                          os << "b" << i;
                          return 0;
                        },
                        i == 4 ? 0.3 : 10};
      },
      [&](unsigned i, const ChildResult &built) -> std::optional<ChildResult> {
        events.push_back("measure " + std::to_string(i));
        if (!built.succeeded())
          return std::nullopt;
        return runInChild(
            [i](llvm::raw_ostream &os) {
              os << "m" << i;
              return 0;
            },
            10);
      },
      [&](unsigned i, const ChildResult &built, const ChildResult *measured) {
        std::string e = "done " + std::to_string(i) + " " + built.report;
        if (!built.succeeded())
          e += built.status == ChildResult::Status::TimedOut ? "timeout"
                                                             : "crash";
        if (measured)
          e += " " + measured->report;
        events.push_back(e);
      });
  EXPECT_EQ(events, (std::vector<std::string>{
                        "measure 0", "done 0 b0 m0", "measure 1",
                        "done 1 b1 m1", "measure 2", "done 2 crash",
                        "measure 3", "done 3 b3 m3", "measure 4",
                        "done 4 timeout", "measure 5", "done 5 b5 m5"}));
}

TEST(ChildPipelineTest, BuildsRunTogetherMeasurementsOneAtATime) {
  // Builds 0 and 1 each wait for the other's file: they end well only when
  // they run at the same time.
  std::string lock = tempPath("measuring");
  std::vector<std::string> built, measured;
  runBuildAndMeasure(
      4, 2,
      [](unsigned i) {
        return ChildJob{[i](llvm::raw_ostream &os) {
                          std::string mine = tempPath("built" + std::to_string(i));
                          std::string other =
                              tempPath("built" + std::to_string(i ^ 1));
                          int fd = open(mine.c_str(), O_CREAT | O_WRONLY, 0600);
                          close(fd);
                          os << (waitForFile(other) ? "together" : "alone");
                          return 0;
                        },
                        10};
      },
      [&](unsigned, const ChildResult &) -> std::optional<ChildResult> {
        // Each measurement holds a lock file: a second one at the same time
        // would fail to create it.
        return runInChild(
            [lock](llvm::raw_ostream &os) {
              int fd = open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
              if (fd < 0) {
                os << "overlap";
                return 0;
              }
              close(fd);
              usleep(50000);
              llvm::sys::fs::remove(lock);
              os << "alone";
              return 0;
            },
            10);
      },
      [&](unsigned, const ChildResult &b, const ChildResult *m) {
        built.push_back(b.report);
        measured.push_back(m ? m->report : "none");
      });
  EXPECT_EQ(built, std::vector<std::string>(4, "together"));
  EXPECT_EQ(measured, std::vector<std::string>(4, "alone"));
  llvm::sys::fs::remove_directories(llvm::sys::path::parent_path(lock));
}

TEST(ServingChildTest, OneChildServesRequestsAndKeepsItsState) {
  // The count lives in the child: it grows only while one child serves.
  unsigned served = 0;
  ServingChild child([&](llvm::StringRef request, llvm::raw_ostream &os) {
    os << request << " " << ++served << " " << getpid();
    return true;
  });
  ChildResult first = child.call("a", 10);
  ChildResult second = child.call("b", 10);
  ASSERT_TRUE(first.succeeded()) << first.describe();
  ASSERT_TRUE(second.succeeded()) << second.describe();
  llvm::StringRef a = first.report, b = second.report;
  EXPECT_TRUE(a.starts_with("a 1 ")) << a.str();
  EXPECT_TRUE(b.starts_with("b 2 ")) << b.str();
  EXPECT_EQ(a.rsplit(' ').second, b.rsplit(' ').second); // the same pid
  EXPECT_NE(a.rsplit(' ').second, std::to_string(getpid()));
  EXPECT_EQ(child.getNumStarts(), 1u);
  EXPECT_EQ(served, 0u); // the parent's copy never ran
}

TEST(ServingChildTest, CrashesHangsAndRefusalsEndTheChildNotTheParent) {
  ServingChild child([](llvm::StringRef request, llvm::raw_ostream &os) {
    if (request == "crash")
      raise(SIGSEGV);
    if (request == "hang")
      for (;;)
        pause();
    // A large answer crosses the pipe's buffer.
    os << std::string(request == "big" ? 1 << 20 : 1, 'x');
    return request != "last";
  });
  ChildResult crashed = child.call("crash", 10);
  EXPECT_EQ(crashed.status, ChildResult::Status::Signaled);
  EXPECT_EQ(crashed.signal, SIGSEGV);
  EXPECT_FALSE(child.isRunning());
  ChildResult hung = child.call("hang", 0.3);
  EXPECT_EQ(hung.status, ChildResult::Status::TimedOut);
  EXPECT_FALSE(child.isRunning());
  ChildResult big = child.call("big", 10);
  ASSERT_TRUE(big.succeeded()) << big.describe();
  EXPECT_EQ(big.report.size(), size_t(1) << 20);
  EXPECT_TRUE(child.isRunning());
  ChildResult last = child.call("last", 10);
  EXPECT_TRUE(last.succeeded()) << last.describe();
  EXPECT_EQ(last.report, "x");
  EXPECT_FALSE(child.isRunning());
  EXPECT_TRUE(child.call("again", 10).succeeded());
  EXPECT_EQ(child.getNumStarts(), 4u);
}

TEST(ServingChildTest, WarmUpRunsInTheChildBeforeTheFirstRequest) {
  // The warm-up's state is the child's: every request of one child sees it,
  // a child forked again warms up again, the parent never runs it.
  unsigned warmUps = 0;
  ServingChild child(
      [&](llvm::StringRef request, llvm::raw_ostream &os) {
        os << warmUps;
        return request != "last";
      },
      [&] { ++warmUps; });
  EXPECT_FALSE(child.isRunning());
  EXPECT_TRUE(child.ensureStarted());
  EXPECT_TRUE(child.isRunning());
  EXPECT_TRUE(child.ensureStarted()); // the same child
  EXPECT_EQ(child.call("a", 10).report, "1");
  EXPECT_EQ(child.call("last", 10).report, "1");
  EXPECT_FALSE(child.isRunning());
  EXPECT_EQ(child.call("b", 10).report, "1");
  EXPECT_EQ(child.getNumStarts(), 2u);
  EXPECT_EQ(warmUps, 0u);
}

TEST(ServingChildTest, PoolStopsTheLeastRecentlyUsedBeyondItsCapacity) {
  auto echo = [](llvm::StringRef request, llvm::raw_ostream &os) {
    os << request;
    return true;
  };
  ServingChild a(echo), b(echo), c(echo);
  ServingChildPool pool(2);
  for (ServingChild *child : {&a, &b}) {
    pool.use(*child);
    ASSERT_TRUE(child->ensureStarted());
  }
  pool.use(a); // b is now the least recently used
  ASSERT_TRUE(c.ensureStarted());
  pool.use(c);
  EXPECT_TRUE(a.isRunning());
  EXPECT_FALSE(b.isRunning());
  EXPECT_TRUE(c.isRunning());
  // A stopped child starts again on its next call.
  pool.use(b);
  EXPECT_FALSE(a.isRunning());
  EXPECT_TRUE(b.call("again", 10).succeeded());
  pool.remove(c);
  EXPECT_EQ(pool.getChildren().size(), 2u);
  pool.setCapacity(1);
  pool.use(b);
  EXPECT_TRUE(b.isRunning());
}

TEST(MeasurementTest, MedianAndRepeats) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  unsigned prepared = 0, ran = 0;
  MeasureOptions options;
  options.warmupRuns = 2;
  options.minRepeats = 5;
  options.minTotalSeconds = 0;
  llvm::Expected<Measurement> m = measure(
      [&](unsigned run) { EXPECT_EQ(run, prepared++); },
      [&] {
        ++ran;
        return llvm::Error::success();
      },
      options);
  ASSERT_TRUE(bool(m));
  EXPECT_EQ(m->seconds.size(), 5u);
  EXPECT_EQ(ran, 7u);
  EXPECT_EQ(prepared, 7u); // prepared before every run, warm-ups included
}

TEST(MeasurementTest, ErrorsStopTheMeasurement) {
  llvm::Expected<Measurement> m = measure(
      [](unsigned) {},
      [] {
        return llvm::createStringError(llvm::inconvertibleErrorCode(), "boom");
      },
      MeasureOptions());
  ASSERT_FALSE(bool(m));
  EXPECT_EQ(llvm::toString(m.takeError()), "boom");
}

} // namespace
