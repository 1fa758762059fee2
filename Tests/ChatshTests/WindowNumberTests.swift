import Foundation
import TestSupport
import Testing

@testable import ChatClient

#if canImport(Glibc)
  import Glibc
#endif

/// chatsh(1), "FILES": window numbers kept per conversation from one run
/// to the next, in `$XDG_STATE_HOME/chatsh/windows`.
@Suite struct WindowNumberTests {
  typealias Harness = ChatSessionTests.Harness

  @Test("a conversation gets its number of last time; a new one the lowest free and not kept")
  func keptNumbersComeBack() {
    let model = ChatModel(me: "bob")
    model.keptNumbers = ["#zeta": 1, "#alpha": 3]
    for name in ["#alpha", "#beta", "#zeta"] { model.open(name) }
    #expect(model.windowList(fitting: 80) == "1:#zeta 2:#beta [3:#alpha]")
    #expect(model.switchTo(number: 1) && model.current.name == "#zeta")
    #expect(!model.switchTo(number: 4))
    // Closing leaves the others where they are; the next one fills the gap.
    model.close("#beta")
    #expect(model.windowList(fitting: 80) == "[1:#zeta] 3:#alpha")
    model.open("@cat")
    #expect(model.windowList(fitting: 80) == "[1:#zeta] 2:@cat 3:#alpha")
    #expect(model.windowNumbers == ["#zeta": 1, "@cat": 2, "#alpha": 3])
  }

  @Test("at the start the broker's order does not renumber; a number kept for one gone is freed")
  func startKeepsNumbers() {
    let harness = Harness(me: "bob")
    let model = harness.session.model
    model.keptNumbers = ["#zeta": 1, "#gone": 2, "#alpha": 3]
    harness.session.start(targets: [])
    // Before the broker's list, nothing is forgotten.
    #expect(model.windowNumbers == ["#zeta": 1, "#gone": 2, "#alpha": 3])
    harness.feed(
      "CONV #alpha 3 2026-11-30T10:00:00.000Z 3 0 0",
      "CONV #zeta 8 2026-11-30T17:59:00.000Z 8 0 0", "OK CONVERSATIONS 2")
    #expect(model.windowList(fitting: 80) == "[1:#zeta] 3:#alpha")
    #expect(model.windowNumbers == ["#zeta": 1, "#alpha": 3])
    harness.session.submit("/join #new")
    #expect(model.find("#new")?.number == 2)
  }

  @Test("the numbers are written whole, mode 0600, and read back")
  func storeRoundTrip() throws {
    let home = try TemporaryDirectory("cb-state")
    let store = StateStore(environment: ["XDG_STATE_HOME": home.path])
    store.saveWindows(["#ops": 3, "@cat": 1, "#team": 2])
    #expect(store.loadWindows() == ["#ops": 3, "@cat": 1, "#team": 2])
    let text = try String(contentsOfFile: home.path("chatsh/windows"), encoding: .utf8)
    #expect(text == "1 @cat\n2 #team\n3 #ops\n")
    var info = stat()
    #expect(stat(home.path("chatsh/windows"), &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
    #expect(stat(home.path("chatsh"), &info) == 0 && info.st_mode & 0o077 == 0)
    store.save(["#ops", "@cat"])
    #expect(stat(home.path("chatsh/open"), &info) == 0 && info.st_mode & 0o777 == 0o600)
    // Replaced by a rename: nothing is left beside the files.
    let files = try FileManager.default.contentsOfDirectory(atPath: home.path("chatsh")).sorted()
    #expect(files == ["open", "windows"])
  }

  @Test("a missing, damaged or foreign windows file is read as what it still says, never a crash")
  func damagedFileIsTolerated() throws {
    let home = try TemporaryDirectory("cb-state")
    let store = StateStore(environment: ["XDG_STATE_HOME": home.path])
    #expect(store.loadWindows() == [:])
    try FileManager.default.createDirectory(
      atPath: home.path("chatsh"), withIntermediateDirectories: true)
    let damaged =
      "2 #ops\nthree #x\n0 #zero\n-1 #neg\n4 #OPS\n5 #ops\n2 @cat\n6\n7 #a b\n"
      + "99999999999999999999 #big\n1 @dog"
    try damaged.write(toFile: home.path("chatsh/windows"), atomically: false, encoding: .utf8)
    #expect(store.loadWindows() == ["#ops": 2, "@dog": 1])
    try Data([0xFF, 0xFE, 0x00, 0x31, 0x20, 0x23]).write(
      to: URL(fileURLWithPath: home.path("chatsh/windows")))
    #expect(store.loadWindows() == [:])
    // A directory where the file should be: nothing read, nothing written.
    try FileManager.default.removeItem(atPath: home.path("chatsh/windows"))
    try FileManager.default.createDirectory(
      atPath: home.path("chatsh/windows"), withIntermediateDirectories: true)
    #expect(store.loadWindows() == [:])
    store.saveWindows(["#ops": 1])
    #expect(store.loadWindows() == [:])
  }
}
