/// Where the broker's socket is when no option names it: the system
/// service's, or the per-user one that `chatbroker` binds when a user
/// starts it. chatbroker binds there and chatsh looks there
/// (chatbroker(8), "FILES"; chatsh(1), "ENVIRONMENT").
public enum DefaultPaths {
  /// The system service's socket (root, or systemd's socket unit).
  public static let systemSocket = "/run/chatbroker/chatbroker.sock"

  /// `$XDG_RUNTIME_DIR/chatbroker/chatbroker.sock`, or
  /// `/tmp/chatbroker-UID/chatbroker.sock` without XDG_RUNTIME_DIR.
  public static func perUserSocket(environment: [String: String], uid: UInt32) -> String {
    if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
      return runtime + "/chatbroker/chatbroker.sock"
    }
    return "/tmp/chatbroker-\(uid)/chatbroker.sock"
  }
}
