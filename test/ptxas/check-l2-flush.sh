#!/usr/bin/env bash
# The GPU runner's L2 flush kernel (ke/Runtime/L2Flush.h, hand-written PTX)
# assembles with `ptxas -arch=sm_90` and keeps its loads: the unit tests
# L2FlushTest.*, with a ptxas found or fetched as for ptxas-small. Fails
# loudly when there is none (the unit label's run skips that test instead).
# Usage: check-l2-flush.sh KE_UNIT_TESTS
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ptxas=$("$root/scripts/fetch-ptxas.sh") || {
  echo "check-l2-flush: FAIL: no ptxas (set KE_PTXAS, install CUDA, or allow pip)"
  exit 1
}
echo "check-l2-flush: using $ptxas"
KE_PTXAS="$ptxas" KE_REQUIRE_PTXAS=1 exec "$1" --gtest_filter='L2FlushTest.*'
