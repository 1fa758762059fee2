import Foundation
import LineProtocol

/// Shared by every fuzz target: reading fixed-size values off the front of
/// the input, and the checks that turn a quiet wrong answer into a crash
/// libFuzzer reports.
struct FuzzInput {
  private var bytes: UnsafeRawBufferPointer

  init(_ data: UnsafePointer<UInt8>, _ count: Int) {
    bytes = UnsafeRawBufferPointer(start: data, count: count)
  }

  var rest: UnsafeRawBufferPointer { bytes }

  /// Eight bytes as an `Int64` (zeros past the end of the input).
  mutating func int64() -> Int64 {
    var value: UInt64 = 0
    for index in 0..<8 where index < bytes.count {
      value |= UInt64(bytes[index]) << (8 * UInt64(index))
    }
    bytes = UnsafeRawBufferPointer(rebasing: bytes[min(8, bytes.count)...])
    return Int64(bitPattern: value)
  }

  mutating func byte() -> UInt8 {
    guard let first = bytes.first else { return 0 }
    bytes = UnsafeRawBufferPointer(rebasing: bytes[1...])
    return first
  }
}

/// A line the broker sends must be one line of valid UTF-8 with no control
/// character: anything else could steer a client's terminal or forge a line.
func checkBrokerLine(_ line: [UInt8], _ what: @autoclosure () -> String) {
  guard line.last == UInt8(ascii: "\n") else { fatalError("\(what()): line without LF") }
  let body = Array(line.dropLast())
  guard let text = String(validating: body, as: UTF8.self) else {
    fatalError("\(what()): line is not UTF-8")
  }
  if containsControlCharacter(text.replacingOccurrences(of: "\t", with: " ")) {
    fatalError("\(what()): control character in \(text.debugDescription)")
  }
}

/// Time zones the `<when>` target picks from: UTC, one with DST, one far
/// east with a half-hour offset, one far west.
let fuzzTimeZones = [
  "UTC", "Europe/Berlin", "Asia/Kolkata", "Pacific/Kiritimati", "America/St_Johns",
]
.map { TimeZone(identifier: $0)! }
