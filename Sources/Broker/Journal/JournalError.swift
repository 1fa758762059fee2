/// Why the journal cannot be used; each says what to do about it.
public enum JournalError: Error, CustomStringConvertible {
  case locked(directory: String)
  case corrupt(path: String, line: Int, reason: String)
  /// A link, or a file of another user, where the broker keeps its own.
  case unsafe(UnsafePath)
  case system(SystemError)

  public var description: String {
    switch self {
    case .locked(let directory):
      "another chatbroker is using the state directory \(directory); stop it first, or use --state-dir"
    case .corrupt(let path, let line, let reason):
      "\(path) line \(line) cannot be read (\(reason)); start once with --repair to keep every readable record and set the damaged lines aside in a file next to the journal"
    case .unsafe(let reason):
      reason.description
    case .system(let error):
      error.description
    }
  }
}
