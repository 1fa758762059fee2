#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One unit of input cut out of a byte stream by ``LineFramer``.
public enum Frame: Equatable, Sendable {
  /// A complete line without its LF (and without a CR right before it).
  case line(String)
  /// A line over the size limit; its bytes were discarded up to its LF.
  case tooLong
  /// A line that is not valid UTF-8.
  case badUTF8
}

/// Cuts a byte stream arriving in arbitrary chunks into lines, kept apart
/// from what the lines mean (as swift-nio's `LineBasedFrameDecoder` does).
///
/// - LF ends a line; a CR right before the LF is dropped.
/// - Empty lines are skipped: they get no reply.
/// - A line longer than `maximumLineBytes` is reported once as `.tooLong`, and
///   its excess is dropped as it arrives instead of being buffered.
/// - The framer remembers how far it has scanned, so a line trickling in
///   byte by byte costs linear, not quadratic, time.
public struct LineFramer: Sendable {
  public let maximumLineBytes: Int

  private var buffer: [UInt8] = []
  /// Where the next unread line starts in `buffer`.
  private var lineStart = 0
  /// How far `buffer` has been searched for LF.
  private var scanned = 0
  /// Inside a line already reported `.tooLong`: drop bytes until LF.
  private var discarding = false

  public init(maximumLineBytes: Int = 4096) {
    self.maximumLineBytes = maximumLineBytes
  }

  /// Bytes received but not yet handed out as frames.
  public var bufferedByteCount: Int { buffer.count - lineStart }

  /// Adds received bytes; call ``next()`` until it returns `nil` afterwards.
  public mutating func append<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
    compactIfUseful()
    buffer.append(contentsOf: bytes)
  }

  /// Adds received bytes from raw memory (the read buffer of a socket).
  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    compactIfUseful()
    buffer.append(contentsOf: bytes)
  }

  /// The next complete frame, or `nil` when more input is needed.
  public mutating func next() -> Frame? {
    while true {
      guard let newline = findNewline() else {
        return overflowIfTooLong()
      }
      let end = newline
      let start = lineStart
      lineStart = newline + 1
      scanned = lineStart
      if discarding {
        discarding = false
        continue
      }
      if let frame = frame(from: start, to: end) {
        return frame
      }
    }
  }

  /// At end of input: the final line that had no LF, if any. The framer is
  /// empty afterwards.
  public mutating func finish() -> Frame? {
    defer {
      buffer.removeAll()
      lineStart = 0
      scanned = 0
      discarding = false
    }
    if discarding || lineStart == buffer.count { return nil }
    return frame(from: lineStart, to: buffer.count)
  }

  private mutating func findNewline() -> Int? {
    let found = buffer.withUnsafeBytes { raw -> Int? in
      guard scanned < raw.count, let base = raw.baseAddress else { return nil }
      guard let newline = memchr(base + scanned, Int32(UInt8(ascii: "\n")), raw.count - scanned)
      else { return nil }
      return base.distance(to: UnsafeRawPointer(newline))
    }
    if found == nil { scanned = buffer.count }
    return found
  }

  /// Without an LF in sight, a line can still be known to be too long:
  /// report it now and drop what was buffered of it.
  private mutating func overflowIfTooLong() -> Frame? {
    // One byte of slack for the CR of a CRLF line of exactly the limit.
    let pending = buffer.count - lineStart
    guard pending > maximumLineBytes + 1 else { return nil }
    buffer.removeAll(keepingCapacity: true)
    lineStart = 0
    scanned = 0
    if discarding { return nil }
    discarding = true
    return .tooLong
  }

  private func frame(from start: Int, to newline: Int) -> Frame? {
    var end = newline
    if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
    if end == start { return nil }
    if end - start > maximumLineBytes { return .tooLong }
    return buffer.withUnsafeBufferPointer { pointer in
      let bytes = pointer.slice(start, end)
      var line = String(decoding: bytes, as: UTF8.self)
      // Decoding replaces each invalid sequence with U+FFFD (EF BF BD),
      // which is not what was there, since EF BF BD is valid: the line was
      // valid UTF-8 exactly when decoding left its bytes as they were. (This
      // costs a memcmp; String(validating:as:) costs a generic metadata
      // lookup per call.)
      let unchanged = line.withUTF8 { decoded in
        decoded.count == bytes.count
          && memcmp(decoded.baseAddress!, bytes.baseAddress!, bytes.count) == 0
      }
      return unchanged ? .line(line) : .badUTF8
    }
  }

  private mutating func compactIfUseful() {
    guard lineStart > 0 else { return }
    if lineStart == buffer.count {
      buffer.removeAll(keepingCapacity: true)
    } else if lineStart >= 4096 && lineStart * 2 >= buffer.count {
      buffer.removeSubrange(0..<lineStart)
    } else {
      return
    }
    scanned -= lineStart
    lineStart = 0
  }
}
