//===- L2Flush.cpp - The read-only L2 flush kernel ------------------------===//

#include "ke/Runtime/L2Flush.h"

#include <algorithm>

using namespace ke;

// Registers: %rd1 buffer, %rd2 vectors, %r1 magic, %rd3 the global address,
// %rd4 the vector index, %rd6 the grid's stride, %r6 the xor of what this
// thread read. Without the guarded store nothing reads %r6 and ptxas drops
// the loop with its loads (4 registers instead of 16 for sm_90); the unit
// test checks that it did not (test/unit/CudaRunnerTest.cpp).
static const char kPtx[] = R"ptx(//
// ke's L2 flush (lib/Runtime/L2Flush.cpp): reads a buffer, writes nothing.
//
.version 7.0
.target sm_52
.address_size 64

.visible .entry ke_l2_flush_read(
	.param .u64 ke_l2_flush_read_param_0,
	.param .u64 ke_l2_flush_read_param_1,
	.param .u32 ke_l2_flush_read_param_2
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<10>;

	ld.param.u64 	%rd1, [ke_l2_flush_read_param_0];
	ld.param.u64 	%rd2, [ke_l2_flush_read_param_1];
	ld.param.u32 	%r1, [ke_l2_flush_read_param_2];
	cvta.to.global.u64 	%rd3, %rd1;
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mul.wide.u32 	%rd4, %r2, %r3;
	cvt.u64.u32 	%rd5, %r4;
	add.s64 	%rd4, %rd4, %rd5;
	mov.u32 	%r5, %nctaid.x;
	mul.wide.u32 	%rd6, %r5, %r3;
	mov.u32 	%r6, 0;
	setp.ge.u64 	%p1, %rd4, %rd2;
	@%p1 bra 	$L__done;
$L__loop:
	shl.b64 	%rd7, %rd4, 4;
	add.s64 	%rd8, %rd3, %rd7;
	ld.global.v4.u32 	{%r7, %r8, %r9, %r10}, [%rd8];
	xor.b32 	%r6, %r6, %r7;
	xor.b32 	%r6, %r6, %r8;
	xor.b32 	%r6, %r6, %r9;
	xor.b32 	%r6, %r6, %r10;
	add.s64 	%rd4, %rd4, %rd6;
	setp.lt.u64 	%p1, %rd4, %rd2;
	@%p1 bra 	$L__loop;
$L__done:
	setp.ne.s32 	%p2, %r6, %r1;
	@%p2 bra 	$L__end;
	st.global.u32 	[%rd3], %r6;
$L__end:
	ret;
}
)ptx";

const char *ke::getL2FlushKernelPtx() { return kPtx; }

L2FlushLaunch ke::getL2FlushLaunch(uint64_t bytes, unsigned multiprocessors) {
  L2FlushLaunch launch;
  launch.vectors = bytes / 16;
  // 8 blocks of 256 threads fill an SM (2048 threads on sm_80 and sm_90);
  // more blocks than one wave would only add a tail.
  uint64_t maxBlocks = uint64_t(multiprocessors ? multiprocessors : 132) * 8;
  uint64_t needed = (launch.vectors + launch.threads - 1) / launch.threads;
  launch.blocks = unsigned(std::clamp<uint64_t>(needed, 1, maxBlocks));
  return launch;
}
