/// A journal line that is not a record this broker understands.
public struct JournalFormatError: Error, Equatable, Sendable {
  public var reason: String
}
