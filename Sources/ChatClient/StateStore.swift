import Foundation
import LineProtocol
import Posix

#if canImport(Glibc)
  import Glibc
#endif

/// What the chat screen keeps from one run to the next, in
/// `$XDG_STATE_HOME/chatsh/` (default `~/.local/state/chatsh/`, chatsh(1),
/// "FILES"): the conversations open last time, one per line in `open`, and
/// their window numbers, `3 #ops` a line in `windows`. Each file is
/// replaced whole (written beside it, then renamed), readable by its owner
/// only; one that is missing or damaged is as good as empty.
public struct StateStore {
  public let directory: String

  public init(environment: [String: String]) {
    if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
      directory = state + "/chatsh"
    } else {
      let home = environment["HOME"] ?? NSHomeDirectory()
      directory = home + "/.local/state/chatsh"
    }
  }

  public var file: String { directory + "/open" }
  public var windowsFile: String { directory + "/windows" }

  /// More than any state file of chatsh holds: a larger one is not read.
  static let largest = 1 << 20

  public func load() -> [String] {
    lines(of: file).filter { $0.hasPrefix("#") || $0.hasPrefix("@") }
  }

  /// Best effort: a read-only home must not stop the chat.
  public func save(_ names: [String]) {
    replace(file, with: names.map { $0 + "\n" }.joined())
  }

  /// The window numbers of last time. A line that does not read as a
  /// number from 1 and a room or `@user` is left out, and so is a name or
  /// number already read: a damaged file gives what it still says.
  public func loadWindows() -> [String: Int] {
    var numbers: [String: Int] = [:]
    var taken: Set<Int> = []
    for line in lines(of: windowsFile) {
      let words = line.split(separator: " ")
      guard words.count == 2, let number = Int(words[0]), number >= 1, number <= 10_000,
        let target = Target(String(words[1])), target.description == words[1],
        numbers[target.description] == nil, taken.insert(number).inserted
      else { continue }
      numbers[target.description] = number
    }
    return numbers
  }

  /// Best effort, as ``save(_:)``.
  public func saveWindows(_ numbers: [String: Int]) {
    let lines = numbers.sorted { $0.value < $1.value }.map { "\($0.value) \($0.key)\n" }
    replace(windowsFile, with: lines.joined())
  }

  private func lines(of path: String) -> [String] {
    guard let bytes = try? FileDescriptor.readAll(path: path), bytes.count <= Self.largest,
      let text = String(validating: bytes, as: UTF8.self)
    else { return [] }
    return text.split(whereSeparator: \.isNewline).map(String.init)
  }

  /// Writes `text` to a file of its own beside `path`, mode 0600, then
  /// renames it over `path`: a reader, or a chatsh ended halfway, sees the
  /// old file or the new one, never part of one.
  private func replace(_ path: String, with text: String) {
    try? FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    let temporary = "\(path).\(getpid()).new"
    let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return }
    // A file left by an earlier chatsh of the same pid keeps its mode.
    _ = fchmod(fd, 0o600)
    let descriptor = FileDescriptor(rawValue: fd)
    let written = (try? descriptor.writeAll(text)) != nil
    descriptor.close()
    if !written || rename(temporary, path) != 0 { unlink(temporary) }
  }
}
