import Glibc
import LineProtocol

/// The one reader of journal files, for start-up, for the replay after a
/// failed sync and for compaction. A journal file is zero-filled ahead of
/// its records (see ``ZeroFill``): the records end at the first NUL byte,
/// which no record contains (JSON writes control characters as `\u0000`),
/// and everything after it must be NUL too (chatbroker(8), "JOURNAL
/// FORMAT").
enum JournalReader {
  /// Where the records of a file's contents end.
  struct Extent {
    /// Bytes up to the last complete line before the zeros.
    var records: Int
    /// Bytes of an incomplete last record (a crash mid-write), before the zeros.
    var torn: Int
    /// Where bytes other than NUL follow the zeros, if they do: damage.
    var strayAfterZeros: Int?
  }

  /// Finds the end of the records in `contents`.
  static func extent(of contents: [UInt8]) -> Extent {
    contents.withUnsafeBufferPointer { extent(of: $0) }
  }

  static func extent(of buffer: UnsafeBufferPointer<UInt8>) -> Extent {
    guard let base = buffer.baseAddress, !buffer.isEmpty else {
      return Extent(records: 0, torn: 0, strayAfterZeros: nil)
    }
    var logicalEnd = buffer.count
    var stray: Int?
    if let zero = memchr(base, 0, buffer.count) {
      logicalEnd = UnsafeRawPointer(zero) - UnsafeRawPointer(base)
      var index = logicalEnd
      // Word-sized steps would be faster; this runs once, over the tail.
      while index < buffer.count {
        if buffer[index] != 0 {
          stray = index
          break
        }
        index += 1
      }
    }
    var lastLineEnd = logicalEnd
    while lastLineEnd > 0 && buffer[lastLineEnd - 1] != UInt8(ascii: "\n") { lastLineEnd -= 1 }
    return Extent(records: lastLineEnd, torn: logicalEnd - lastLineEnd, strayAfterZeros: stray)
  }

  /// A journal file mapped into memory, read-only, for as long as this
  /// lives. Start-up and the replay after a failed sync read the file
  /// through it: reading 180 MB into an array cost a copy and a page fault
  /// per page of fresh memory (measured with `perf record` on a
  /// 1,000,000-record journal). Only while nobody cuts the file shorter:
  /// compaction, which runs beside the engine, reads with ``read(_:length:)``.
  final class Mapped {
    let bytes: UnsafeBufferPointer<UInt8>

    /// Maps `path` (its first `length` bytes if given); an absent or empty
    /// file maps to no bytes.
    init(_ path: String, length: Int64? = nil) throws(SystemError) {
      let input = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
      if input < 0 {
        guard errno == ENOENT else { throw SystemError("open", subject: path) }
        bytes = UnsafeBufferPointer(start: nil, count: 0)
        return
      }
      defer { close(input) }
      var status = stat()
      guard fstat(input, &status) == 0 else { throw SystemError("fstat", subject: path) }
      let count = Int(min(length ?? Int64(status.st_size), Int64(status.st_size)))
      guard count > 0 else {
        bytes = UnsafeBufferPointer(start: nil, count: 0)
        return
      }
      guard let address = mmap(nil, count, PROT_READ, MAP_PRIVATE, input, 0),
        address != MAP_FAILED
      else { throw SystemError("mmap", subject: path) }
      _ = madvise(address, count, MADV_SEQUENTIAL)
      bytes = UnsafeBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: count)
    }

    deinit {
      if let base = bytes.baseAddress {
        munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
      }
    }
  }

  /// Reads a whole file (or its first `length` bytes).
  static func read(_ path: String, length: Int64? = nil) throws(SystemError) -> [UInt8] {
    let input = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    if input < 0 {
      if errno == ENOENT { return [] }
      throw SystemError("open", subject: path)
    }
    defer { close(input) }
    var status = stat()
    let total = length ?? (fstat(input, &status) == 0 ? Int64(status.st_size) : 0)
    // Read straight into the array's storage: no second copy of a large file.
    var failed = false
    var contents = [UInt8](unsafeUninitializedCapacity: Int(total)) { buffer, count in
      count = 0
      while count < buffer.count {
        let start = buffer.baseAddress! + count
        guard let read = try? systemCall("read", { Glibc.read(input, start, buffer.count - count) })
        else {
          failed = true
          break
        }
        if read == 0 { break }
        count += read
      }
    }
    if failed { throw SystemError("read", subject: path) }
    // A file that grew since fstat is read to its end.
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while length == nil {
      let count = chunk.withUnsafeMutableBytes { buffer in
        try? systemCall("read") { Glibc.read(input, buffer.baseAddress, buffer.count) }
      }
      guard let count else { throw SystemError("read", subject: path) }
      if count == 0 { break }
      contents.append(contentsOf: chunk[0..<count])
    }
    return contents
  }

  /// Calls `apply` with each record of the first `records` bytes of
  /// `contents`, in order (parsed on a second thread, see
  /// ``JournalParser``); stops at the first line that is not a record and
  /// returns its number and what was wrong.
  static func replay(
    _ contents: [UInt8], _ apply: (JournalRecord) -> Void
  ) -> (line: Int, reason: String)? {
    contents.withUnsafeBufferPointer { replay($0, apply) }
  }

  static func replay(
    _ contents: UnsafeBufferPointer<UInt8>, _ apply: (JournalRecord) -> Void
  ) -> (line: Int, reason: String)? {
    var failure: (line: Int, reason: String)?
    JournalParser.forEachLine(in: contents) { lineNumber, _, parsed in
      switch parsed {
      case .success(let record):
        apply(record)
        return true
      case .failure(let error):
        failure = (lineNumber, error.reason)
        return false
      }
    }
    return failure
  }
}
