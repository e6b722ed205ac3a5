//===- DistributedTest.cpp - MPI tuning's messages and launch detection ---===//

#include "ke/Distributed/DistributedTuning.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>

using namespace ke;

namespace {

/// A record through its message and back, as rank 0 receives it.
CandidateRecord roundTrip(const CandidateRecord &record) {
  std::string text;
  llvm::raw_string_ostream(text) << candidateRecordToMessage(record);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  EXPECT_TRUE(bool(parsed));
  llvm::Expected<CandidateRecord> back =
      candidateRecordFromMessage(*parsed, Schedule());
  EXPECT_TRUE(bool(back)) << llvm::toString(back.takeError());
  return *back;
}

TEST(DistributedTest, ValidRecordsKeepEveryTimedRun) {
  CandidateRecord record;
  record.script = "transform.sequence {}";
  record.measurement.seconds = {3e-6, 2e-6, 4e-6};
  record.measurement.median = 3e-6;
  record.relativeError = 1.5e-7;
  record.earlyStop = true;
  record.measuredBy = "rank 1 on node: cpu znver4";
  CandidateRecord back = roundTrip(record);
  EXPECT_TRUE(back.isValid());
  EXPECT_TRUE(back.schedule.has_value());
  EXPECT_EQ(back.script, record.script);
  EXPECT_EQ(back.measurement.seconds, record.measurement.seconds);
  EXPECT_EQ(back.measurement.median, record.measurement.median);
  EXPECT_EQ(back.relativeError, record.relativeError);
  EXPECT_TRUE(back.earlyStop);
  EXPECT_EQ(back.measuredBy, record.measuredBy);
}

TEST(DistributedTest, ErrorsKeepTheirClassAndAnInfiniteError) {
  CandidateRecord record;
  record.error = ErrorClass::WrongResult;
  record.message = "result 0: relative error inf";
  record.relativeError = INFINITY;
  CandidateRecord back = roundTrip(record);
  EXPECT_EQ(back.error, ErrorClass::WrongResult);
  EXPECT_EQ(back.message, record.message);
  EXPECT_TRUE(std::isinf(back.relativeError));
  EXPECT_FALSE(back.earlyStop);
}

TEST(DistributedTest, MalformedRecordsAreRejected) {
  for (const char *text :
       {"[]", R"({"seconds": []})", R"({"error": "none"})",
        R"({"error": "no-such-class", "seconds": []})"}) {
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
    ASSERT_TRUE(bool(parsed));
    llvm::Expected<CandidateRecord> record =
        candidateRecordFromMessage(*parsed, Schedule());
    EXPECT_FALSE(bool(record)) << text;
    llvm::consumeError(record.takeError());
  }
}

TEST(DistributedTest, OnlyALauncherOfSeveralRanksMakesAnMpiRun) {
  const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"};
  for (const char *name : names)
    unsetenv(name);
  EXPECT_FALSE(isLaunchedByMpi());
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  EXPECT_FALSE(isLaunchedByMpi());
  setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  EXPECT_TRUE(isLaunchedByMpi());
  unsetenv("OMPI_COMM_WORLD_SIZE");
  setenv("PMI_SIZE", "2", 1);
  EXPECT_TRUE(isLaunchedByMpi());
  unsetenv("PMI_SIZE");
}

TEST(DistributedTest, AMissingMpiLibraryIsAnError) {
  setenv("KE_MPI_LIBRARY", "/nonexistent/libmpi.so.40", 1);
  llvm::Expected<std::unique_ptr<MpiWorld>> world = MpiWorld::create();
  unsetenv("KE_MPI_LIBRARY");
  ASSERT_FALSE(bool(world));
  std::string message = llvm::toString(world.takeError());
  if (isMpiSupported())
    EXPECT_NE(message.find("/nonexistent/libmpi.so.40"), std::string::npos)
        << message;
  else
    EXPECT_NE(message.find("without MPI"), std::string::npos) << message;
}

} // namespace
