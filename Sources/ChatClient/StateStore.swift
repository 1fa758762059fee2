import Foundation

/// Remembers the conversations open last time, one per line in
/// `$XDG_STATE_HOME/chatsh/open` (default `~/.local/state/chatsh/open`).
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

  public func load() -> [String] {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return [] }
    return text.split(whereSeparator: \.isNewline).map(String.init).filter {
      $0.hasPrefix("#") || $0.hasPrefix("@")
    }
  }

  /// Best effort: a read-only home must not stop the chat.
  public func save(_ names: [String]) {
    try? FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true)
    let text = names.map { $0 + "\n" }.joined()
    try? text.write(toFile: file, atomically: true, encoding: .utf8)
  }
}
