import Glibc
import LineProtocol

/// Why the journal cannot be used; each says what to do about it.
public enum JournalError: Error, CustomStringConvertible {
  case locked(directory: String)
  case corrupt(path: String, line: Int, reason: String)
  case system(SystemError)

  public var description: String {
    switch self {
    case .locked(let directory):
      "another chatbroker is using the state directory \(directory); stop it first, or use --state-dir"
    case .corrupt(let path, let line, let reason):
      "\(path) line \(line) cannot be read (\(reason)); start once with --repair to keep every readable record and set the damaged lines aside in a file next to the journal"
    case .system(let error):
      error.description
    }
  }
}

/// What start-up found in the journal.
public struct JournalLoadReport: Sendable {
  public var records = 0
  public var bytes: Int64 = 0
  /// Bytes of an incomplete last line (a crash mid-write) that were cut off.
  public var tornBytesDropped = 0
  /// Lines that `--repair` set aside, and where.
  public var damagedLines = 0
  public var damagedPath: String?
}

/// The JSON Lines journal in the state directory, in the manner of Redis'
/// AOF: records are written before any reply about them, synced by the
/// server's group commit, replayed at start-up, and compacted into a new file
/// (temp file, fsync, rename, fsync of the directory) as it grows.
public final class FileJournal: JournalSink {
  public let directory: String
  public let path: String
  /// Below this size the journal is never compacted.
  public let compactionFloor: Int64

  public private(set) var fd: Int32 = -1
  public private(set) var size: Int64 = 0
  /// Records appended since start-up; the server syncs up to a count.
  public private(set) var writtenCount: UInt64 = 0
  private var sizeAfterCompaction: Int64 = 0
  private let lockFD: Int32

  /// Opens (creating, 0700) the state directory and locks it, so a second
  /// broker on the same directory refuses to start.
  public init(directory: String, compactionFloor: Int64 = 4 << 20) throws(JournalError) {
    self.directory = directory
    self.path = directory + "/journal.jsonl"
    self.compactionFloor = compactionFloor
    if mkdir(directory, 0o700) != 0 && errno != EEXIST {
      throw .system(SystemError("mkdir", subject: directory))
    }
    let lockPath = directory + "/chatbroker.lock"
    let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard lock >= 0 else { throw .system(SystemError("open", subject: lockPath)) }
    if flock(lock, LOCK_EX | LOCK_NB) != 0 {
      close(lock)
      throw .locked(directory: directory)
    }
    lockFD = lock
  }

  deinit {
    if fd >= 0 { close(fd) }
    close(lockFD)
  }

  /// Reads every record, in order, then opens the journal for appending.
  /// A torn last line is cut off; damage elsewhere stops start-up unless
  /// `repair` is set, which moves the damaged lines to a file beside it.
  public func load(
    repair: Bool, now: Timestamp, _ apply: (JournalRecord) -> Void
  ) throws(JournalError) -> JournalLoadReport {
    var report = JournalLoadReport()
    var contents = try readFile()
    if let lastNewline = contents.lastIndex(of: UInt8(ascii: "\n")) {
      report.tornBytesDropped = contents.count - (lastNewline + 1)
    } else {
      report.tornBytesDropped = contents.count
    }
    contents.removeLast(report.tornBytesDropped)
    var kept: [UInt8] = []
    var damaged: [UInt8] = []
    var lineNumber = 0
    var failure: JournalError?
    contents.withUnsafeBufferPointer { buffer in
      var start = 0
      while start < buffer.count, failure == nil {
        var end = start
        while buffer[end] != UInt8(ascii: "\n") { end += 1 }
        lineNumber += 1
        let line = UnsafeBufferPointer(rebasing: buffer[start..<end])
        do throws(JournalFormatError) {
          let record = try JournalRecord(jsonLine: line)
          apply(record)
          report.records += 1
          if repair { kept.append(contentsOf: buffer[start...end]) }
        } catch {
          if repair {
            damaged.append(contentsOf: buffer[start...end])
            report.damagedLines += 1
          } else {
            failure = .corrupt(path: path, line: lineNumber, reason: error.reason)
          }
        }
        start = end + 1
      }
    }
    if let failure { throw failure }
    if report.damagedLines > 0 {
      let aside = "\(path).damaged-\(now.milliseconds)"
      try writeFileDurably(aside, damaged)
      try writeFileDurably(path, kept)
      report.damagedPath = aside
      contents = kept
    } else if report.tornBytesDropped > 0 {
      try check("truncate", path) { truncate(path, off_t(contents.count)) }
    }
    try openForAppend()
    report.bytes = size
    sizeAfterCompaction = size
    if size == 0 {
      // A new journal starts with its header, so its format is known.
      do throws(StorageError) {
        try append([.header(nextID: MessageID(value: 1))])
      } catch {
        throw .system(SystemError("write", errno: EIO, subject: path))
      }
    }
    return report
  }

  /// Writes the records with one `write(2)`, retrying short writes. On
  /// failure the file is cut back, so no half record stays behind.
  public func append(_ records: [JournalRecord]) throws(StorageError) {
    var bytes: [UInt8] = []
    for record in records { bytes.append(contentsOf: record.jsonLine) }
    do throws(SystemError) {
      try Self.writeAll(fd, bytes)
    } catch {
      _ = ftruncate(fd, off_t(size))
      throw StorageError(reason: String(cString: strerror(error.errno)))
    }
    size += Int64(bytes.count)
    writtenCount += UInt64(records.count)
  }

  /// Whether the journal has doubled since it was last compacted.
  public var shouldCompact: Bool {
    size > compactionFloor && size > 2 * sizeAfterCompaction
  }

  /// Replaces the journal with one that holds only what `snapshot` keeps:
  /// written to a temp file, synced, renamed over, and the directory synced.
  /// Afterwards everything appended so far is durable.
  public func compact(_ snapshot: EngineSnapshot) throws(SystemError) {
    let temporary = path + ".compacting"
    let out = try systemCall("open", subject: temporary) {
      open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    }
    defer { close(out) }
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 20)
    var failure: SystemError?
    snapshot.forEachRecord { record in
      guard failure == nil else { return }
      buffer.append(contentsOf: record.jsonLine)
      if buffer.count >= 1 << 20 {
        do throws(SystemError) { try Self.writeAll(out, buffer) } catch { failure = error }
        buffer.removeAll(keepingCapacity: true)
      }
    }
    if let failure {
      unlink(temporary)
      throw failure
    }
    do throws(SystemError) {
      try Self.writeAll(out, buffer)
      try systemCall("fsync", subject: temporary) { fsync(out) }
      try systemCall("rename", subject: path) { rename(temporary, path) }
    } catch {
      unlink(temporary)
      throw error
    }
    try syncDirectory()
    close(fd)
    fd = -1
    do throws(JournalError) {
      try openForAppend()
    } catch {
      throw SystemError("open", errno: EIO, subject: path)
    }
    sizeAfterCompaction = size
  }

  // MARK: - Files

  private func readFile() throws(JournalError) -> [UInt8] {
    let input = open(path, O_RDONLY | O_CLOEXEC)
    if input < 0 {
      if errno == ENOENT { return [] }
      throw .system(SystemError("open", subject: path))
    }
    defer { close(input) }
    var contents: [UInt8] = []
    var status = stat()
    if fstat(input, &status) == 0 { contents.reserveCapacity(Int(status.st_size)) }
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else { throw .system(SystemError("read", subject: path)) }
      if count == 0 { return contents }
      contents.append(contentsOf: chunk[0..<count])
    }
  }

  private func openForAppend() throws(JournalError) {
    let opened = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    guard opened >= 0 else { throw .system(SystemError("open", subject: path)) }
    var status = stat()
    fstat(opened, &status)
    fd = opened
    size = Int64(status.st_size)
  }

  private func writeFileDurably(_ target: String, _ bytes: [UInt8]) throws(JournalError) {
    let temporary = target + ".tmp"
    let out = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard out >= 0 else { throw .system(SystemError("open", subject: temporary)) }
    defer { close(out) }
    do throws(SystemError) {
      try Self.writeAll(out, bytes)
      try systemCall("fsync", subject: temporary) { fsync(out) }
      try systemCall("rename", subject: target) { rename(temporary, target) }
      try syncDirectory()
    } catch {
      throw .system(error)
    }
  }

  private func syncDirectory() throws(SystemError) {
    let directoryFD = try systemCall("open", subject: directory) {
      open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }
    defer { close(directoryFD) }
    try systemCall("fsync", subject: directory) { fsync(directoryFD) }
  }

  private func check(_ call: String, _ subject: String, _ body: () -> Int32) throws(JournalError) {
    do throws(SystemError) {
      try systemCall(call, subject: subject, body)
    } catch {
      throw .system(error)
    }
  }

  static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeBytes { buffer in
        write(fd, buffer.baseAddress! + offset, buffer.count - offset)
      }
      if count < 0 {
        if errno == EINTR { continue }
        throw SystemError("write")
      }
      offset += count
    }
  }
}
