import Glibc

/// Bytes waiting to be written to one connection, in one contiguous buffer so
/// that a flush is a single `send(2)` however many lines are queued. A shared
/// line is copied in once per recipient with `memcpy` (~100 bytes), which is
/// far cheaper than the system calls it saves. Manual memory, because the
/// generic `Array.append(contentsOf:)` measured several times slower here.
/// Non-copyable, so it lives inline in its connection and owns its memory.
struct OutputBuffer: ~Copyable {
  private var storage: UnsafeMutableRawPointer? = nil
  private var capacity = 0
  private var start = 0
  private var end = 0
  /// Whether the bytes written so far end with a whole line, so that a
  /// line put after a discard (`BYE`) never continues a cut one.
  private(set) var sentEndsLine = true
  /// On a wire whose lines are frames (the browser door's WebSocket), not
  /// LF-ended lines: where each appended frame (or run of frames) ends,
  /// counted in bytes ever appended, for those not yet all written; nil
  /// on the other wires, which find a line's end by its LF.
  private var frameEnds: FIFOQueue<Int>?
  private var appendedTotal = 0
  private var consumedTotal = 0

  /// `framed`: each ``append(_:)`` is whole frames, and a discard keeps
  /// the rest of a frame partly written, as it keeps the rest of a line.
  init(framed: Bool = false) {
    if framed { frameEnds = FIFOQueue() }
  }

  deinit { free(storage) }

  var count: Int { end - start }
  var isEmpty: Bool { start == end }

  mutating func append(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { source in
      guard let base = source.baseAddress, source.count > 0 else { return }
      reserve(source.count)
      memcpy(storage! + end, base, source.count)
      end += source.count
      if frameEnds != nil {
        appendedTotal += source.count
        frameEnds!.append(appendedTotal)
      }
    }
  }

  /// Drops everything queued and the memory it used.
  mutating func discardAll() {
    free(storage)
    storage = nil
    capacity = 0
    start = 0
    end = 0
    if frameEnds != nil {
      frameEnds!.removeAll()
      appendedTotal = consumedTotal
    }
  }

  /// Drops everything not yet written except the rest of a line (or
  /// frame) already partly written, so that the client still reads whole
  /// lines (frames) only.
  mutating func discardUnsent() {
    guard !sentEndsLine, let storage else { return discardAll() }
    if let frameEnd = frameEnds?.first {
      let rest = Array(
        UnsafeRawBufferPointer(start: storage + start, count: frameEnd - consumedTotal))
      discardAll()
      append(rest)
      return
    }
    let unsent = UnsafeRawBufferPointer(start: storage + start, count: count)
    let rest = Array(unsent.prefix { $0 != UInt8(ascii: "\n") }) + [UInt8(ascii: "\n")]
    discardAll()
    append(rest)
  }

  /// Drops `written` bytes from the front.
  mutating func consume(_ written: Int) {
    guard written > 0 else { return }
    if frameEnds != nil {
      consumedTotal += written
      var lastEnd: Int?
      while let first = frameEnds!.first, first <= consumedTotal {
        lastEnd = frameEnds!.removeFirst()
      }
      sentEndsLine = lastEnd == consumedTotal
    } else {
      sentEndsLine = storage!.load(fromByteOffset: start + written - 1, as: UInt8.self) == 10
    }
    start += written
    if start == end {
      start = 0
      end = 0
      // Give back an unusually large buffer; keep an ordinary one for the
      // next burst, since growing it again costs more than it saves.
      if capacity > 1 << 20 {
        free(storage)
        storage = nil
        capacity = 0
      }
    }
  }

  func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    body(UnsafeRawBufferPointer(start: storage.map { $0 + start }, count: count))
  }

  private mutating func reserve(_ more: Int) {
    if end + more <= capacity { return }
    if start > 0 && count + more <= capacity {
      // Enough room once the written part is dropped: slide down.
      memmove(storage!, storage! + start, count)
      end -= start
      start = 0
      return
    }
    let newCapacity = max(4096, (count + more) * 2)
    let grown = malloc(newCapacity)!
    if let storage { memcpy(grown, storage + start, count) }
    free(storage)
    storage = grown
    capacity = newCapacity
    end -= start
    start = 0
  }
}
