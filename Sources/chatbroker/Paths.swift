import Broker
import Foundation
import Glibc

/// Where the socket and the journal live when no option says.
///
/// As root (a system service): `/run/chatbroker/chatbroker.sock` and
/// `/var/lib/chatbroker`. As anyone else: the per-user places,
/// `$XDG_RUNTIME_DIR/chatbroker/chatbroker.sock` (else
/// `/tmp/chatbroker-UID/chatbroker.sock`) and `$XDG_STATE_HOME/chatbroker`
/// (else `~/.local/state/chatbroker`). systemd's `$STATE_DIRECTORY` wins.
enum Paths {
  static let systemStateDirectory = "/var/lib/chatbroker"

  static func socket(option: String?, environment: [String: String]) -> String {
    if let option { return option }
    if let path = environment["CHATBROKER_SOCKET"], !path.isEmpty { return path }
    if getuid() == 0 { return DefaultPaths.systemSocket }
    return DefaultPaths.perUserSocket(environment: environment, uid: getuid())
  }

  static func stateDirectory(option: String?, environment: [String: String]) -> String {
    if let option { return option }
    // systemd may pass several, separated by colons; the first is ours.
    if let directory = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
      return String(directory)
    }
    if getuid() == 0 { return systemStateDirectory }
    if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
      return state + "/chatbroker"
    }
    return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/chatbroker"
  }
}
