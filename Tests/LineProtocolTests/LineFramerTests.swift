import LineProtocol
import TestSupport
import Testing

/// Feeds `input` to a fresh framer in pieces of the given sizes (the last
/// piece takes what is left), draining frames after every piece, then
/// finishes. Checks on the way that the framer never holds more than one
/// line's worth of bytes after draining.
private func frames(
  of input: [UInt8], pieces: some Sequence<Int>, maximumLineBytes: Int = 4096
) -> [Frame] {
  var framer = LineFramer(maximumLineBytes: maximumLineBytes)
  var result: [Frame] = []
  var offset = 0
  var sizes = pieces.makeIterator()
  while offset < input.count {
    let size = min(max(sizes.next() ?? input.count, 1), input.count - offset)
    framer.append(input[offset..<offset + size])
    offset += size
    while let frame = framer.next() { result.append(frame) }
    #expect(framer.bufferedByteCount <= maximumLineBytes + 1)
  }
  if let frame = framer.finish() { result.append(frame) }
  #expect(framer.bufferedByteCount == 0)
  #expect(framer.next() == nil)
  return result
}

private func whole(_ input: [UInt8], maximumLineBytes: Int = 4096) -> [Frame] {
  frames(of: input, pieces: [input.count], maximumLineBytes: maximumLineBytes)
}

private func byteByByte(_ input: [UInt8], maximumLineBytes: Int = 4096) -> [Frame] {
  frames(
    of: input, pieces: repeatElement(1, count: input.count), maximumLineBytes: maximumLineBytes)
}

private func randomChunks(_ input: [UInt8], seed: UInt64, maximumLineBytes: Int = 4096) -> [Frame] {
  var generator = SeededGenerator(seed: seed)
  let sizes = (0..<input.count).map { _ in Int.random(in: 1...700, using: &generator) }
  return frames(of: input, pieces: sizes, maximumLineBytes: maximumLineBytes)
}

/// The protocol's framing rule, written as plainly as possible: split at LF,
/// drop one CR before it, skip empty lines, then check size and UTF-8.
private func referenceFrames(of input: [UInt8], maximumLineBytes: Int) -> [Frame] {
  var result: [Frame] = []
  for var segment in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
    if segment.last == UInt8(ascii: "\r") { segment = segment.dropLast() }
    if segment.isEmpty { continue }
    if segment.count > maximumLineBytes {
      result.append(.tooLong)
    } else if let line = String(validating: segment, as: UTF8.self) {
      result.append(.line(line))
    } else {
      result.append(.badUTF8)
    }
  }
  return result
}

private let line4096 = String(repeating: "a", count: 4091) + "12345"
private let line4097 = String(repeating: "b", count: 4097)

/// One input with every case in it, and the frames it must give.
private let mixedInput: [UInt8] =
  bytes("JOIN #ops\nSAY #ops hi\r\n\n\r\n\nPING\n")
  + bytes(line4096 + "\n")
  + bytes(line4096 + "\r\n")
  + bytes(line4097 + "\n")
  + bytes("after too long\n")
  + [0xFF, 0x41, 0x0A]
  + bytes("after bad utf8 ✓\n")
  + [0xC3, 0x0A]
  + bytes("a\rb\n")
  + bytes(line4097 + "\r\n")
  + bytes("unterminated 🎉")

private let mixedFrames: [Frame] = [
  .line("JOIN #ops"), .line("SAY #ops hi"), .line("PING"),
  .line(line4096), .line(line4096),
  .tooLong, .line("after too long"),
  .badUTF8, .line("after bad utf8 ✓"),
  .badUTF8, .line("a\rb"),
  .tooLong, .line("unterminated 🎉"),
]

@Test func mixedInputFedWhole() {
  #expect(whole(mixedInput) == mixedFrames)
}

@Test func mixedInputFedByteByByte() {
  #expect(byteByByte(mixedInput) == mixedFrames)
}

@Test(arguments: 1...25)
func mixedInputFedInRandomChunks(seed: Int) {
  #expect(randomChunks(mixedInput, seed: UInt64(seed)) == mixedFrames, "seed \(seed)")
}

@Test func referenceModelAgreesOnMixedInput() {
  #expect(referenceFrames(of: mixedInput, maximumLineBytes: 4096) == mixedFrames)
}

/// Random inputs around a small limit, where every boundary is hit often:
/// any chunking must give what the plain rule gives.
@Test(arguments: 1...40)
func randomInputMatchesReferenceRule(seed: Int) {
  var generator = SeededGenerator(seed: UInt64(seed) &* 7919)
  let limit = 8
  // Mostly valid pieces, U+FFFD among them, and some broken sequences.
  let pieces: [[UInt8]] =
    ["a", "b", " ", "\r", "\n", "\n", "é", "\u{FFFD}", "🎉", "\u{85}"].map(bytes)
    + [[0xFF], [0xEF, 0xBF], [0xED, 0xA0, 0x80], [0xF0, 0x9F], [0xC2], [0x80]]
  var input: [UInt8] = []
  while input.count < 2000 {
    let valid = Int.random(in: 0..<10, using: &generator) < 9
    input += pieces[Int.random(in: valid ? 0..<10 : 10..<16, using: &generator)]
  }
  let expected = referenceFrames(of: input, maximumLineBytes: limit)
  // The input exercises every kind of frame.
  #expect(expected.contains(.tooLong) && expected.contains(.badUTF8))
  #expect(
    expected.contains {
      if case .line(let line) = $0 { !line.allSatisfy(\.isASCII) } else { false }
    })
  #expect(whole(input, maximumLineBytes: limit) == expected, "seed \(seed)")
  #expect(byteByByte(input, maximumLineBytes: limit) == expected, "seed \(seed)")
  let sizes = (0..<input.count).map { _ in Int.random(in: 1...20, using: &generator) }
  #expect(frames(of: input, pieces: sizes, maximumLineBytes: limit) == expected, "seed \(seed)")
}

@Test func lfAndCRLFEndLines() {
  #expect(whole(bytes("a\nb\r\nc\n")) == [.line("a"), .line("b"), .line("c")])
  // Only the CR right before the LF goes.
  #expect(whole(bytes("a\r\r\n")) == [.line("a\r")])
  #expect(whole(bytes("\ra\n")) == [.line("\ra")])
}

@Test func emptyLinesAreSkipped() {
  #expect(whole(bytes("\n\n\r\n\n")) == [])
  #expect(whole(bytes("\nPING\n\r\n")) == [.line("PING")])
  #expect(byteByByte(bytes("\r\n\r\nQUIT\r\n\r\n")) == [.line("QUIT")])
}

@Test func exactlyTheLimitIsALine() {
  let line = String(repeating: "x", count: 4096)
  for ending in ["\n", "\r\n"] {
    #expect(whole(bytes(line + ending)) == [.line(line)])
    #expect(byteByByte(bytes(line + ending)) == [.line(line)])
  }
  // Multi-byte characters count in bytes: 2048 × "é" is 4096 bytes.
  let accents = String(repeating: "é", count: 2048)
  #expect(whole(bytes(accents + "\n")) == [.line(accents)])
  #expect(whole(bytes(accents + "é\n")) == [.tooLong])
}

@Test func oneByteOverTheLimitIsTooLongThenResynchronises() {
  for ending in ["\n", "\r\n"] {
    let input = bytes(line4097 + ending + "PING\n")
    #expect(whole(input) == [.tooLong, .line("PING")])
    #expect(byteByByte(input) == [.tooLong, .line("PING")])
    #expect(randomChunks(input, seed: 99) == [.tooLong, .line("PING")])
  }
  // A CR that is not right before the LF counts as content.
  #expect(whole(bytes(line4096 + "\rx\nPING\n")) == [.tooLong, .line("PING")])
}

@Test(arguments: [1000, 4096, 4097, 65536])
func veryLongLineIsReportedOnceWithoutBuffering(chunkSize: Int) {
  let megabyte = [UInt8](repeating: UInt8(ascii: "z"), count: 1 << 20)
  var framer = LineFramer()
  var reported: [Frame] = []
  var largest = 0
  var offset = 0
  while offset < megabyte.count {
    let end = min(offset + chunkSize, megabyte.count)
    framer.append(megabyte[offset..<end])
    offset = end
    while let frame = framer.next() { reported.append(frame) }
    largest = max(largest, framer.bufferedByteCount)
  }
  #expect(reported == [.tooLong])
  #expect(largest <= framer.maximumLineBytes + 1)
  framer.append(bytes("zzz\nSAY #ops still here\n"))
  while let frame = framer.next() { reported.append(frame) }
  #expect(reported == [.tooLong, .line("SAY #ops still here")])
  #expect(framer.bufferedByteCount == 0)
  #expect(framer.finish() == nil)
}

@Test func tooLongUnterminatedLineAtEndIsReportedOnce() {
  let input = bytes("PING\n" + line4097 + "zz")
  #expect(whole(input) == [.line("PING"), .tooLong])
  #expect(byteByByte(input) == [.line("PING"), .tooLong])
  // Without next() in between, finish() still says it is too long.
  var framer = LineFramer()
  framer.append(bytes(line4097))
  #expect(framer.finish() == .tooLong)
}

@Test(
  arguments: [
    [0xFF], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80],
    [0xE2, 0x82], [0x41, 0xF0, 0x9F, 0x8E],
  ] as [[UInt8]])
func invalidUTF8IsReportedAndTheNextLineIsFine(_ invalid: [UInt8]) {
  let input = bytes("PING 1\n") + invalid + bytes("\nPING 2\n")
  let expected: [Frame] = [.line("PING 1"), .badUTF8, .line("PING 2")]
  #expect(whole(input) == expected)
  #expect(byteByByte(input) == expected)
  #expect(whole(input + invalid) == expected + [.badUTF8])
}

@Test func finishHandsOutTheUnterminatedLine() {
  var framer = LineFramer()
  framer.append(bytes("PING\nQUIT"))
  #expect(framer.next() == .line("PING"))
  #expect(framer.next() == nil)
  #expect(framer.bufferedByteCount == 4)
  #expect(framer.finish() == .line("QUIT"))
  #expect(framer.finish() == nil)
  // The framer is empty and usable again afterwards.
  framer.append(bytes("HELP\n"))
  #expect(framer.next() == .line("HELP"))
  #expect(framer.finish() == nil)

  #expect(whole(bytes("QUIT\r")) == [.line("QUIT")])
  #expect(whole(bytes("PING\n\r")) == [.line("PING")])
  #expect(whole([]) == [])
  var empty = LineFramer()
  #expect(empty.finish() == nil)
}

@Test func appendFromRawMemory() {
  var framer = LineFramer()
  let input = bytes("JOIN #ops\nSAY #o")
  input.withUnsafeBytes { framer.append($0) }
  #expect(framer.next() == .line("JOIN #ops"))
  #expect(framer.next() == nil)
  bytes("ps hi\n").withUnsafeBytes { framer.append($0) }
  #expect(framer.next() == .line("SAY #ops hi"))
  #expect(framer.next() == nil)
}

@Test func manyLinesAcrossManyAppendsKeepTheBufferSmall() {
  var framer = LineFramer()
  let line = bytes("SAY #ops " + String(repeating: "x", count: 90) + "\n")
  var chunk: [UInt8] = []
  for _ in 0..<700 { chunk += line }
  var count = 0
  for _ in 0..<20 {
    framer.append(chunk[0..<chunk.count / 3])
    while framer.next() != nil { count += 1 }
    framer.append(chunk[(chunk.count / 3)...])
    while framer.next() != nil { count += 1 }
    #expect(framer.bufferedByteCount < line.count)
  }
  #expect(count == 14_000)
}
