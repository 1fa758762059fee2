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
