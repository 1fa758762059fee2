import Dispatch
import Foundation

/// Parses journal lines on the caller's thread while a second thread applies
/// them in order: start-up replay is parsing plus applying, and the two
/// overlap on the machine's two cores (measured: 1.2 s to well under 1 s for
/// a million records). Parsing makes the Strings that histories keep, so it
/// runs where malloc grows its heap cheaply: a second thread's malloc arena
/// grows by an `mprotect(2)` per page, a tenth of the parsing thread's time
/// when it parsed there (measured with `perf record` on a 1,000,000-record
/// journal).
///
/// Blank lines (nothing but spaces, tabs or CR) are skipped: an editor or a
/// careless `echo >>` leaves them, and they hold nothing to lose
/// (chatbroker(8), "JOURNAL FORMAT").
enum JournalParser {
  /// A line and what it parsed to; `nil` for a blank line. A struct, not a
  /// tuple: arrays of tuples were copied and destroyed through the runtime's
  /// generic tuple witnesses, a fifth of the applying thread (measured with
  /// `perf record` on a 1,000,000-record journal).
  struct Parsed {
    let bytes: Range<Int>
    let record: Result<JournalRecord, JournalFormatError>?
  }

  /// Calls `body` for each line of `contents` (which ends in LF), in order,
  /// with its 1-based number, its bytes (LF included) and what it parsed to;
  /// blank lines are counted but not passed. `body` returns false to stop
  /// early. `body` runs on another thread, one call at a time, while the
  /// caller waits.
  static func forEachLine(
    in contents: [UInt8],
    _ body: (Int, Range<Int>, Result<JournalRecord, JournalFormatError>) -> Bool
  ) {
    contents.withUnsafeBufferPointer { forEachLine(in: $0, body) }
  }

  /// The same over bytes the caller keeps valid until this returns (a
  /// memory-mapped journal: start-up reads it without a copy).
  static func forEachLine(
    in contents: UnsafeBufferPointer<UInt8>,
    _ body: (Int, Range<Int>, Result<JournalRecord, JournalFormatError>) -> Bool
  ) {
    let chunks = split(contents, into: 4 << 20)
    let pipeline = Pipeline(capacity: 4)
    withoutActuallyEscaping(body) { body in
      nonisolated(unsafe) let body = body
      let applying = DispatchGroup()
      DispatchQueue.global().async(group: applying) {
        apply(chunks.count, from: pipeline, body)
      }
      for chunk in chunks {
        guard var parsed = pipeline.waitForSpace() else { break }
        parse(contents, chunk, into: &parsed)
        pipeline.push(parsed)
      }
      // `body` and what it captures must not outlive this call.
      applying.wait()
      pipeline.synchronize()
    }
  }

  /// Calls `body` with the lines of `count` chunks, in order, until it
  /// returns false.
  private static func apply(
    _ count: Int, from pipeline: Pipeline,
    _ body: (Int, Range<Int>, Result<JournalRecord, JournalFormatError>) -> Bool
  ) {
    defer { pipeline.synchronize() }
    var lineNumber = 0
    for _ in 0..<count {
      var parsed = pipeline.pop()
      // By index: each line is lent to `body`, not copied out of the array.
      for index in parsed.indices {
        lineNumber += 1
        guard case .some(let record) = parsed[index].record else { continue }
        if !body(lineNumber, parsed[index].bytes, record) {
          pipeline.cancel()
          return
        }
      }
      parsed.removeAll(keepingCapacity: true)
      pipeline.recycle(parsed)
    }
  }

  /// Ranges of about `size` bytes that end just after an LF.
  private static func split(_ contents: UnsafeBufferPointer<UInt8>, into size: Int) -> [Range<Int>]
  {
    var ranges: [Range<Int>] = []
    var start = 0
    while start < contents.count {
      var end = min(contents.count, start + size)
      while end < contents.count && contents[end - 1] != UInt8(ascii: "\n") { end += 1 }
      ranges.append(start..<end)
      start = end
    }
    return ranges
  }

  /// Appends the lines of `chunk` to `parsed`.
  private static func parse(
    _ buffer: UnsafeBufferPointer<UInt8>, _ chunk: Range<Int>, into parsed: inout [Parsed]
  ) {
    var start = chunk.lowerBound
    while start < chunk.upperBound {
      let end = lineEnd(buffer, from: start)
      let line = UnsafeBufferPointer(rebasing: buffer[start..<end])
      let record: Result<JournalRecord, JournalFormatError>?
      if isBlank(line) {
        record = nil
      } else {
        do throws(JournalFormatError) {
          record = .success(try JournalRecord(jsonLine: line))
        } catch {
          record = .failure(error)
        }
      }
      parsed.append(Parsed(bytes: start..<(end + 1), record: record))
      start = end + 1
    }
  }

  /// Where the line starting at `start` ends (its LF), found by memchr(3)
  /// rather than a byte at a time. Chunks end just after an LF.
  private static func lineEnd(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
    let base = buffer.baseAddress!
    let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), buffer.count - start)!
    return UnsafeRawPointer(newline) - UnsafeRawPointer(base)
  }

  /// Whether a line (without its LF) holds nothing but spaces, tabs or CR.
  static func isBlank(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
    line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == 0x0D }
  }

  /// A bounded hand-over of parsed chunks from the parsing thread, whose
  /// arrays go back to it once applied: a fresh array per chunk (megabytes,
  /// grown by doubling) cost a copy and a page fault per page of new memory
  /// each time, a third of the parsing thread's time (measured with `perf
  /// record` on a 1,000,000-record journal).
  private final class Pipeline: @unchecked Sendable {
    private let lock = NSLock()
    private var ready: [[Parsed]] = []
    private var spare: [[Parsed]] = []
    private var cancelled = false
    private let items = DispatchSemaphore(value: 0)
    private let space: DispatchSemaphore

    init(capacity: Int) {
      space = DispatchSemaphore(value: capacity)
    }

    /// An empty array to parse the next chunk into, or nil once cancelled.
    func waitForSpace() -> [Parsed]? {
      space.wait()
      return lock.withLock { cancelled ? nil : spare.popLast() ?? [] }
    }

    func push(_ chunk: [Parsed]) {
      lock.withLock { ready.append(chunk) }
      items.signal()
    }

    func pop() -> [Parsed] {
      items.wait()
      return lock.withLock { ready.removeFirst() }
    }

    /// Hands back an applied chunk's (emptied) array, and its place.
    func recycle(_ chunk: [Parsed]) {
      lock.withLock { spare.append(chunk) }
      space.signal()
    }

    /// Taken last by the applier and first by the caller once it is done:
    /// what `body` wrote on the applying thread is ordered before what the
    /// caller reads next, as ThreadSanitizer can see.
    func synchronize() {
      lock.withLock {}
    }

    func cancel() {
      lock.withLock { cancelled = true }
      space.signal()
    }
  }
}
