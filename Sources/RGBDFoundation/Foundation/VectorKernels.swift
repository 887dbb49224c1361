import CKernels

/// Which build of the vector kernels runs: the AVX2 loops of the `CKernels` target when
/// the CPU has AVX2, the Swift loops (baseline x86-64 SSE2, or NEON on arm64) otherwise.
/// Both compute the same bytes.
///
/// Setting the environment variable `RGBD_DISABLE_AVX2` (to anything) before the first
/// use keeps the Swift loops, to compare the two or to rule the AVX2 code out.
package enum VectorKernels {
    /// Whether this CPU and operating system run AVX2 code.
    static let cpuHasAVX2: Bool = rgbd_kernels_have_avx2() != 0

    /// Whether the AVX2 kernels are used in this process (decided once).
    package static let avx2: Bool = cpuHasAVX2 && !ProcessEnvironment.isSet("RGBD_DISABLE_AVX2")
}
