import Dispatch
import Glibc
import LineProtocol

/// The JSON Lines journal in the state directory, in the manner of Redis'
/// AOF: records are written before any reply about them, synced by the
/// group commit (``GroupCommit``) of the journal's owner while the broker
/// runs (``JournalCommitter``), replayed at start-up, and compacted into
/// a new file (temp file, fsync, rename, fsync of the directory) as it
/// grows. This type is the file; the committer decides when it is written,
/// synced, cut back and replaced.
///
/// While the server syncs, the records of one event are gathered and
/// written with one `pwrite(2)` when the event ends (``flush()``), as
/// Redis flushes its AOF buffer once per loop. The file is zero-filled
/// ahead of its records (``ZeroFill``), so its size is not its logical
/// end: ``size`` is, and readers stop at the first NUL byte
/// (``JournalReader``).
///
/// Its one writer is the ``JournalCommitter``, the engine's journal sink.
public final class FileJournal {
  public let directory: String
  public let path: String
  /// Below this size the journal is never compacted.
  public let compactionFloor: Int64

  public private(set) var fd: Int32 = -1
  /// The logical end: bytes of records in the file. Zeros follow.
  public private(set) var size: Int64 = 0
  /// Records appended since start-up, gathered ones included; a line
  /// showing them waits until the server synced up to this count.
  public private(set) var writtenCount: UInt64 = 0
  /// Records whose bytes are in the file (up to ``size``).
  public private(set) var flushedCount: UInt64 = 0
  /// Whether the file, as ``load(repair:now:_:)`` found it, holds a record
  /// that took a text out of the state (``JournalRecord/takesTextOut``):
  /// no compaction ran after it, so the text itself may still be in the
  /// file (see ``PurgeSchedule``).
  public private(set) var holdsTakenBackText = false
  /// Set while the server syncs: appends are gathered until ``flush()``.
  /// Without syncing (`--no-sync`) each append is written at once, so that
  /// a failed write is refused before anything changes.
  var gathersWrites = false
  private var gathered: [UInt8] = []
  private let zeroFill = ZeroFill()
  /// How zero-filling reports back to the engine's loop; none before the
  /// server starts, and no filling ahead then.
  private var post: JournalCommitter.Post?
  /// Counts the files compaction put in place: a size measured in one
  /// generation means nothing in the next.
  public private(set) var generation = 0
  private var sizeAfterCompaction: Int64 = 0
  private let lockFD: Int32
  /// What start-up changed to keep the journal private, to be logged.
  public private(set) var notices: [String] = []

  /// Opens (creating, 0700) the state directory and locks it, so a second
  /// broker on the same directory refuses to start. Nothing in the
  /// directory is opened through a symbolic link (`O_NOFOLLOW`): a link
  /// there is refused, so the broker never writes where it points.
  /// `--compact-min-size`'s default, Redis's `auto-aof-rewrite-min-size`:
  /// below it a compaction would win back little, and under a steady load
  /// a small floor compacted several times a second (a sixth of the
  /// broker's CPU at 100 writing clients, `perf record -g` under
  /// `chatbench durable`).
  public static let defaultCompactionFloor: Int64 = 64 << 20

  public init(directory: String, compactionFloor: Int64 = defaultCompactionFloor)
    throws(JournalError)
  {
    self.directory = directory
    self.path = directory + "/journal.jsonl"
    self.compactionFloor = compactionFloor
    if mkdir(directory, 0o700) != 0 && errno != EEXIST {
      throw .system(SystemError("mkdir", subject: directory))
    }
    let lockPath = directory + "/chatbroker.lock"
    let lock = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
    guard lock >= 0 else {
      if errno == ELOOP { throw .unsafe(PrivateDirectory.linkRefused(lockPath)) }
      throw .system(SystemError("open", subject: lockPath))
    }
    do throws(UnsafePath) {
      _ = try PrivateDirectory.checkFile(lock, path: lockPath)
    } catch {
      close(lock)
      throw .unsafe(error)
    }
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
    try checkJournalFile()
    let file: JournalReader.Mapped
    do throws(SystemError) {
      file = try JournalReader.Mapped(path)
    } catch {
      throw .system(error)
    }
    let extent = JournalReader.extent(of: file.bytes)
    var damaged: [UInt8] = []
    if let stray = extent.strayAfterZeros {
      guard repair else {
        let line = file.bytes[..<extent.records].reduce(1) {
          $1 == UInt8(ascii: "\n") ? $0 + 1 : $0
        }
        throw .corrupt(
          path: path, line: line,
          reason: "bytes other than NUL after the zeros that end the records, at byte \(stray)")
      }
      damaged = file.bytes[stray...].filter { $0 != 0 }
      if damaged.last != UInt8(ascii: "\n") { damaged.append(UInt8(ascii: "\n")) }
      report.damagedLines += damaged.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    }
    report.tornBytesDropped = extent.torn
    let contents = UnsafeBufferPointer(rebasing: file.bytes[..<extent.records])
    var kept: [UInt8] = []
    var failure: JournalError?
    JournalParser.forEachLine(in: contents) { lineNumber, bytes, parsed in
      switch parsed {
      case .success(let record):
        apply(record)
        report.records += 1
        if record.takesTextOut { holdsTakenBackText = true }
        if repair { kept.append(contentsOf: contents[bytes]) }
      case .failure(let error):
        guard repair else {
          failure = .corrupt(path: path, line: lineNumber, reason: error.reason)
          return false
        }
        damaged.append(contentsOf: contents[bytes])
        report.damagedLines += 1
      }
      return true
    }
    if let failure { throw failure }
    var logicalEnd = contents.count
    if report.damagedLines > 0 {
      let aside = "\(path).damaged-\(now.milliseconds)"
      try writeFileDurably(aside, damaged)
      try writeFileDurably(path, kept)
      report.damagedPath = aside
      logicalEnd = kept.count
    } else if report.tornBytesDropped > 0 {
      // Cut with the zeros after it: the next records start a new fill.
      let out = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
      guard out >= 0 else { throw .system(SystemError("open", subject: path)) }
      defer { close(out) }
      try check("ftruncate", path) { ftruncate(out, off_t(contents.count)) }
    }
    try openForAppend(logicalEnd: Int64(logicalEnd))
    report.bytes = size
    // The journal found may have grown over a previous run for as long as
    // that run lasted, with any share of it dead: over the floor, it is
    // compacted once soon after start-up, and from then on the doubling
    // rule follows the size of what is live, not of the file found.
    sizeAfterCompaction = size > compactionFloor ? 0 : size
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

  /// The server starts: from now on appends are gathered per pass if
  /// `gathering`, and the file is zero-filled ahead, reporting through
  /// `post` (``ReadinessPoll/post(_:)``).
  func attach(post: @escaping JournalCommitter.Post, gathering: Bool, syncing: Bool) {
    self.post = post
    gathersWrites = gathering
    zeroFill.syncs = syncing
    zeroFill.fillAhead(fd, after: size, post: post)
  }

  /// Gathers the records for ``flush()``, or writes them at once with one
  /// `pwrite(2)`; a failed write leaves no record behind.
  func append(_ records: [JournalRecord]) throws(StorageError) {
    for record in records { record.appendJSONLine(to: &gathered) }
    writtenCount += UInt64(records.count)
    guard !gathersWrites else { return }
    do throws(SystemError) {
      try flush()
    } catch {
      writtenCount = flushedCount
      throw StorageError(reason: String(cString: strerror(error.errno)))
    }
  }

  /// Writes what was gathered with one `pwrite(2)` at the logical end. On
  /// failure nothing is kept of it (the bytes written are zeroed again) and
  /// the records stay counted in ``writtenCount`` but not in
  /// ``flushedCount``: the caller refuses them all.
  func flush() throws(SystemError) {
    guard !gathered.isEmpty else { return }
    defer { gathered.removeAll(keepingCapacity: gathered.capacity <= 1 << 20) }
    let failure = gathered.withUnsafeBytes { bytes -> SystemError? in
      do throws(SystemError) {
        try zeroFill.write(fd, bytes, at: size)
        return nil
      } catch {
        return error
      }
    }
    if let failure {
      let zeros = [UInt8](repeating: 0, count: gathered.count)
      _ = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(size)) }
      throw failure
    }
    size += Int64(gathered.count)
    flushedCount = writtenCount
    if let post { zeroFill.fillAhead(fd, after: size, post: post) }
  }

  /// After a failed sync or write: cuts the file back to `size`, the end
  /// of what the last good sync covered, and forgets what was gathered.
  /// The records after it are forgotten; their requests are answered
  /// `STORAGE`.
  public func discardUnsynced(downTo size: Int64, count: UInt64) throws(SystemError) {
    gathered.removeAll()
    zeroFill.reset(end: size)
    try systemCall("ftruncate", subject: path) { ftruncate(fd, off_t(size)) }
    self.size = size
    writtenCount = count
    flushedCount = count
  }

  /// Replays the records as they are now (after ``discardUnsynced``).
  public func replayAll(_ apply: (JournalRecord) -> Void) throws(SystemError) {
    let file = try JournalReader.Mapped(path, length: size)
    if let failure = JournalReader.replay(file.bytes, apply) {
      throw SystemError(
        "replay", errno: EILSEQ, subject: "\(path) line \(failure.line): \(failure.reason)")
    }
  }

  /// Whether the journal has doubled since it was last compacted (or was
  /// found over the floor at start-up and not compacted since).
  public var shouldCompact: Bool {
    size > compactionFloor && size > 2 * sizeAfterCompaction
  }

  /// After a failed compaction: do not try again until the journal doubles.
  public func postponeCompaction() {
    sizeAfterCompaction = size
  }

  /// The last step of a compaction (see ``Compactor``), on the engine's
  /// queue: appends what was written to the journal since `length` to the
  /// compacted file, syncs it, renames it over the journal and syncs the
  /// directory. Returns the old descriptor, which the caller closes once no
  /// sync can be using it. Afterwards everything appended is durable.
  public func finishCompaction(temporary: String, copiedUpTo length: Int64)
    throws(SystemError) -> Int32
  {
    try flush()
    try Self.copy(path, from: length, to: size, appendingTo: temporary)
    // No zeros may be written into the old file once it is replaced.
    zeroFill.reset(end: size)
    try systemCall("rename", subject: path) { rename(temporary, path) }
    try syncDirectory()
    let old = fd
    generation += 1
    do throws(JournalError) {
      try openForAppend(logicalEnd: nil)
      if let post { zeroFill.fillAhead(fd, after: size, post: post) }
    } catch {
      throw SystemError("open", errno: EIO, subject: path)
    }
    sizeAfterCompaction = size
    return old
  }

  // MARK: - Files

  /// Refuses a journal that is a link, not a regular file, or another
  /// user's, and makes one that others may read 0600 (it holds every
  /// direct message), saying so in ``notices``.
  private func checkJournalFile() throws(JournalError) {
    let input = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard input >= 0 else {
      if errno == ENOENT { return }
      if errno == ELOOP { throw .unsafe(PrivateDirectory.linkRefused(path)) }
      throw .system(SystemError("open", subject: path))
    }
    defer { close(input) }
    let status: stat
    do throws(UnsafePath) {
      status = try PrivateDirectory.checkFile(input, path: path)
    } catch {
      throw .unsafe(error)
    }
    guard status.st_mode & 0o077 != 0 else { return }
    try check("chmod", path) { fchmod(input, 0o600) }
    notices.append(
      "the journal \(path) was readable by others (mode \(PrivateDirectory.octal(status.st_mode))), made 0600"
    )
  }

  /// Opens the file for writing at its logical end (its size if `nil`);
  /// what follows it is zeros, already there or written ahead.
  private func openForAppend(logicalEnd: Int64?) throws(JournalError) {
    let opened = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard opened >= 0 else {
      if errno == ELOOP { throw .unsafe(PrivateDirectory.linkRefused(path)) }
      throw .system(SystemError("open", subject: path))
    }
    var status = stat()
    fstat(opened, &status)
    fd = opened
    size = logicalEnd ?? Int64(status.st_size)
    zeroFill.reset(end: Int64(status.st_size))
  }

  private func writeFileDurably(_ target: String, _ bytes: [UInt8]) throws(JournalError) {
    let temporary = target + ".tmp"
    // One left by a crash is removed (a link itself, never its target), and
    // the new one must be created here: O_EXCL follows no link.
    unlink(temporary)
    let out = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
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

  func syncDirectory() throws(SystemError) {
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

  /// Appends bytes `start..<end` of the file at `source` to `target` and
  /// syncs `target`. Compaction uses it to catch up with what the engine
  /// appended meanwhile: in the background while much is left, on the
  /// engine's queue for the last bit.
  public static func copy(
    _ source: String, from start: Int64, to end: Int64, appendingTo target: String
  ) throws(SystemError) {
    let out = try systemCall("open", subject: target) {
      open(target, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
    }
    defer { close(out) }
    let input = try systemCall("open", subject: source) {
      open(source, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    }
    defer { close(input) }
    var offset = start
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while offset < end {
      let count = chunk.withUnsafeMutableBytes {
        pread(input, $0.baseAddress, min($0.count, Int(end - offset)), off_t(offset))
      }
      guard count > 0 else { throw SystemError("read", subject: source) }
      try writeAll(out, Array(chunk[0..<count]))
      offset += Int64(count)
    }
    try systemCall("fsync", subject: target) { fsync(out) }
  }

  static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
    try FileDescriptor(rawValue: fd).writeAll(bytes)
  }
}
