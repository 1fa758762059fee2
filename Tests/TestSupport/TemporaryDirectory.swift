import Foundation
import Glibc

/// A fresh directory under /tmp with a short path (a socket path may hold
/// 107 bytes), readable by every user so other Unix users can reach a
/// socket in it. The caller removes it (``TemporaryDirectory`` does).
public func makeShortTemporaryDirectory(_ prefix: String) throws -> String {
  var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
  guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
  let directory = String(cString: made)
  chmod(directory, 0o755)
  return directory
}

/// A short temporary directory removed, with all it holds, when released.
public final class TemporaryDirectory: @unchecked Sendable {
  public let path: String

  public init(_ prefix: String = "cb") throws {
    path = try makeShortTemporaryDirectory(prefix)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// `name` inside the directory.
  public func path(_ name: String) -> String { path + "/" + name }
}
