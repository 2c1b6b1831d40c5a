package templates

import _ "embed"

// SelfTestCU is the CUDA C source of the runtime self-test kernels
// (cvt_i64_i32, gather_bf16).
//
//go:embed cuda/selftest.cu
var SelfTestCU string

// SelfTestPTX is SelfTestCU compiled for sm_90 with
// `nvcc -ptx -arch=sm_90 -o selftest.ptx selftest.cu` (templates/cuda/README.md).
// The CUDA driver JIT-compiles it for the device at load time.
//
//go:embed cuda/selftest.ptx
var SelfTestPTX string
