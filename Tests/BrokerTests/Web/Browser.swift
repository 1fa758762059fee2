import Foundation
import Posix
import TestSupport
import Testing

/// The chat page in a real browser: Debian's Chromium, headless, driven by
/// `browser.py` (selenium and chromedriver) as a Unix user, so that the web
/// door sees that user as the owner of the page's connection (chatbroker(7),
/// "The web door"). One JSON command a line, one answer a line; every wait
/// is bounded, in the script and here.
final class Browser {
  /// Whether Chromium, its WebDriver and selenium are installed (by
  /// tools/install-deps); the tests skip, saying so, when not.
  static let available: Bool = {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
      && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
      && (try? runCommand(["/usr/bin/python3", "-c", "import selenium"]))?.status == 0
  }()

  static var required: ConditionTrait {
    .enabled(
      if: available,
      "needs chromium, chromium-driver and python3's selenium: run sh tools/install-deps")
  }

  /// Where screenshots go, for a person to look at.
  static let screenshots = Repository.path(".build/check/web")

  private let driver: LineClient

  /// Chromium as `user`, in time zone `zone`, with a window of that size,
  /// in a system's light or `dark` colour scheme, with `notifications`
  /// allowed or not yet asked for, resolving names by `hostRules`
  /// (Chromium's `--host-resolver-rules`) when given.
  init(
    user: String, zone: String = "UTC", width: Int = 1100, height: Int = 760, dark: Bool = false,
    notifications: Bool = false, hostRules: String = ""
  ) throws {
    driver = try LineClient(
      running: [
        "/usr/bin/python3", Repository.path("Tests/BrokerTests/Web/browser.py"), "--user", user,
        "--zone", zone, "--width", "\(width)", "--height", "\(height)", "--dark", dark ? "1" : "0",
        "--notifications", notifications ? "1" : "0", "--host-rules", hostRules,
      ], timeout: 60)
    let ready = try driver.readLine(timeout: 60)
    guard ready == "READY" else { throw TestFailure("the browser did not start: \(ready ?? "")") }
  }

  private var running = true

  deinit { quit() }

  /// Ends Chromium, and with it every page it showed. The script quits
  /// Chromium and its driver before it answers, so that nothing is left
  /// running when the client kills the script.
  func quit() {
    guard running else { return }
    running = false
    try? driver.line(#"{"op":"quit"}"#)
    _ = try? driver.readLine(timeout: 20)
  }

  /// Sends one command and returns its value; an `ERR` fails.
  @discardableResult
  func call(_ command: [String: Any]) throws -> Any? {
    let data = try JSONSerialization.data(withJSONObject: command)
    try driver.line(String(decoding: data, as: UTF8.self))
    guard let reply = try driver.readLine(timeout: 90) else {
      throw TestFailure("the browser script ended")
    }
    guard reply.hasPrefix("OK ") else { throw TestFailure("browser: \(reply)") }
    return try JSONSerialization.jsonObject(
      with: Data(reply.dropFirst(3).utf8), options: .fragmentsAllowed)
  }

  func open(_ url: String) throws { try call(["op": "open", "url": url]) }

  /// The value of `script`, a function body (`return ...`).
  @discardableResult
  func js(_ script: String) throws -> Any? { try call(["op": "js", "script": script]) }

  /// The first truthy value of `script`, tried for at most `timeout` seconds.
  @discardableResult
  func wait(_ script: String, timeout: Double = 10) throws -> Any? {
    try call(["op": "wait", "script": script, "timeout": timeout * testTimeScale])
  }

  /// Keys typed into the element `css` matches; `keys` are selenium's
  /// names, such as `ENTER`.
  func type(_ css: String, _ text: String, keys: [String] = []) throws {
    try call(["op": "type", "css": css, "text": text, "keys": keys])
  }

  func click(_ css: String) throws { try call(["op": "click", "css": css]) }

  func resize(width: Int, height: Int) throws {
    try call(["op": "size", "width": width, "height": height])
  }

  /// Saves a PNG of the window as `.build/check/web/<name>.png`.
  func screenshot(_ name: String) throws {
    try call(["op": "screenshot", "path": Self.screenshots + "/" + name + ".png"])
  }

  /// `value` as a JavaScript string literal, for scripts.
  static func literal(_ value: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: [value])
    return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
  }
}
