import Glibc

/// Seconds on the monotonic clock, for deadlines and latencies.
func monotonicSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

func sleepSeconds(_ seconds: Double) {
  usleep(UInt32(max(0, seconds) * 1e6))
}
