import Glibc
import Posix

/// The Unix groups a privacy run makes for itself, changed as an
/// administrator would (groupadd(8), gpasswd(1), groupdel(8)); root only.
/// The broker sees them through NSS (chatbroker(7), "Private rooms").
final class UnixGroups {
  private(set) var made: [String] = []

  /// `groupadd <name>`; whether it worked.
  func add(_ name: String) -> Bool {
    guard Self.run(["/usr/sbin/groupadd", name]) else { return false }
    made.append(name)
    return true
  }

  /// `gpasswd -a` or `-d`; returns once /etc/group says so.
  func set(_ user: String, member: Bool, of group: String) -> Bool {
    Self.run(["/usr/bin/gpasswd", member ? "-a" : "-d", user, group])
  }

  /// `groupdel` of every group made.
  func removeAll() {
    for name in made { _ = Self.run(["/usr/sbin/groupdel", name]) }
    made.removeAll()
  }

  /// Runs a command quietly (gpasswd tells what it did on its output);
  /// whether it ended with status 0 within 10 s.
  private static func run(_ arguments: [String]) -> Bool {
    guard
      let process = try? ChildProcess(arguments, standardOutput: .null, standardError: .null)
    else { return false }
    guard process.waitUntilExit(timeout: 10) else {
      process.signal(SIGKILL)
      process.waitUntilExit()
      return false
    }
    return process.termination == .exited(0)
  }
}
