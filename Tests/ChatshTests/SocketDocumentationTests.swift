import ChatClient
import Foundation
import Posix
import TestSupport
import Testing

/// README.md, "Which socket", tells each kind of user which broker they
/// reach: the paths it names are the ones chatbroker binds and chatsh
/// tries (DefaultPaths, SocketPath), the /tmp one too.
@Suite struct SocketDocumentationTests {
  @Test("the README names every default socket, and says chatsh prefers the system one")
  func readmeNamesTheSockets() throws {
    let readme = try String(contentsOfFile: Repository.path("README.md"), encoding: .utf8)
    let uid: UInt32 = 1000
    let paths = [
      DefaultPaths.systemSocket,
      DefaultPaths.perUserSocket(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: uid)
        .replacingOccurrences(of: "/run/user/1000", with: "$XDG_RUNTIME_DIR"),
      DefaultPaths.perUserSocket(environment: [:], uid: uid)
        .replacingOccurrences(of: "1000", with: "$UID"),
    ]
    for path in paths {
      #expect(readme.contains(path), "README.md does not name \(path)")
    }
    // chatsh goes to the system broker whenever its socket exists.
    let chosen = SocketPath.resolve(
      option: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: uid,
      exists: { $0 == DefaultPaths.systemSocket })
    #expect(chosen.path == DefaultPaths.systemSocket)
    #expect(readme.contains("otherwise the system broker whenever"))
    #expect(readme.contains("--socket-mode 0600"), "how a user's own broker keeps others out")
  }
}
