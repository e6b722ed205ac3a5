# Runs the fuzzer for SECONDS on a scratch copy of the seed corpus (the seeds
# in the source tree stay untouched). Fails on any crash, memory error,
# timeout, OOM or memory leak. Leak detection is on, after every input and at
# exit: the only memory left behind by design, that of a parse which crashed
# inside MLIR and was recovered by unwinding past its frames, is allocated
# with LeakSanitizer off (WorkloadFuzzer.cpp), so any leak reported is real.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/corpus ${WORK_DIR}/artifacts)
file(GLOB seeds ${CORPUS_SEEDS}/*)
file(COPY ${seeds} DESTINATION ${WORK_DIR}/corpus)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
          ${FUZZER} -max_total_time=${SECONDS} -timeout=20 -rss_limit_mb=4096
          -max_len=4096 -print_final_stats=1 -detect_leaks=1
          -artifact_prefix=${WORK_DIR}/artifacts/ ${WORK_DIR}/corpus
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "fuzzer failed (${status}); reproducer in ${WORK_DIR}/artifacts")
endif()
