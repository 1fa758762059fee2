#if canImport(Glibc)
  import Glibc
#endif

/// Seconds on `CLOCK_MONOTONIC`: for bounds on waits, which a change of
/// the wall clock must neither stretch nor cut short.
public enum MonotonicClock {
  public static func seconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
