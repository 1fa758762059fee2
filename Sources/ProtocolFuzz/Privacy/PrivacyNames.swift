import Glibc

/// The names the privacy oracle gives what it makes, and finds them again
/// in the lines users get: rooms `#pv<run>r<n>`, text tokens `pv<run>t<n>`
/// and Unix groups `pv<run>g<n>`, where `<run>` is a few letters new for
/// each run. A token is one word of letters and digits, so that SEARCH
/// finds it (chatbroker(7), SEARCH); nothing else the fuzzer sends holds
/// the run's letters, so a line that holds them shows something of the
/// oracle's rooms or lines.
public struct PrivacyNames: Sendable {
  /// `pv` and the run's letters: what every name starts with.
  public let marker: String
  private let markerBytes: [UInt8]

  /// `run`: 4 small letters or digits (the test's fixed, the fuzzer's from
  /// the clock and pid, so that runs on one broker do not meet).
  public init(run: String) {
    marker = "pv" + run
    markerBytes = Array(marker.utf8)
  }

  /// Letters of a run unlike any other at this moment on this host.
  public static func freshRun() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var value = UInt64(now.tv_nsec) ^ (UInt64(now.tv_sec) << 20) ^ UInt64(getpid())
    let digits = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    var letters = ""
    for _ in 0..<4 {
      letters.append(digits[Int(value % 36)])
      value /= 36
    }
    return letters
  }

  public func room(_ number: Int) -> String { "#\(marker)r\(number)" }
  public func token(_ number: Int) -> String { "\(marker)t\(number)" }
  public func group(_ number: Int) -> String { "\(marker)g\(number)" }

  /// Whether `word` is one of this run's rooms (as a line names it, any
  /// prefix such as IRC's `@` taken off first).
  public func isRoom(_ word: some StringProtocol) -> Bool {
    word.hasPrefix("#" + marker + "r")
  }

  /// The room names in a word list such as IRC's 319 and 353 texts
  /// (`@#a +#b`), their membership prefixes taken off.
  func rooms(inList text: String) -> [String] {
    text.split(separator: " ").compactMap { word in
      let name = word.drop { $0 == "@" || $0 == "+" || $0 == "%" || $0 == "~" || $0 == "&" }
      return isRoom(name) ? String(name) : nil
    }
  }

  /// Whether the line holds the run's marker at all: most lines do not,
  /// and need no closer look.
  func mentions(_ line: [UInt8]) -> Bool {
    first(in: line, from: 0) != nil
  }

  /// Every token (`pv<run>t<digits>`) in the line, once each.
  func tokens(in line: [UInt8]) -> [String] {
    var found: [String] = []
    var index = 0
    while let at = first(in: line, from: index) {
      var end = at + markerBytes.count
      index = end
      guard end < line.count, line[end] == UInt8(ascii: "t") else { continue }
      end += 1
      let digitsStart = end
      while end < line.count, line[end] >= 0x30, line[end] <= 0x39 { end += 1 }
      guard end > digitsStart else { continue }
      // A token is a whole word: a room name holds no `t` after the marker.
      let token = String(decoding: line[at..<end], as: UTF8.self)
      if !found.contains(token) { found.append(token) }
      index = end
    }
    return found
  }

  /// Where the marker next starts in `line` at or after `start`.
  private func first(in line: [UInt8], from start: Int) -> Int? {
    let count = markerBytes.count
    guard line.count - start >= count else { return nil }
    return line.withUnsafeBufferPointer { bytes -> Int? in
      markerBytes.withUnsafeBufferPointer { marker -> Int? in
        var index = start
        let last = bytes.count - count
        while index <= last {
          guard
            let hit = memchr(bytes.baseAddress! + index, Int32(marker[0]), last - index + 1)
          else { return nil }
          let at = bytes.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
          if memcmp(bytes.baseAddress! + at, marker.baseAddress!, count) == 0 { return at }
          index = at + 1
        }
        return nil
      }
    }
  }
}
