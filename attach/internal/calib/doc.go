// Package calib is the probe-cost calibration program and what its
// profile says: calibcode/calib.S (embedded as calib.bin) makes Batches
// batches of calls of empty functions, static, without a C library; the
// engine records it under a probe kind and Cost reads, per batch, the
// empty callee's self time per call (the cost inside the callee) and its
// caller's (the cost outside).
package calib
