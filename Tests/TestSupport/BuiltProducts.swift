import Foundation

/// Where `swift build` put the binaries under test: beside the test bundle
/// that is running now (`.build/<triple>/debug/`), whatever the scratch path.
public enum BuiltProducts {
  public static let directory: URL = {
    if let override = ProcessInfo.processInfo.environment["CHATBROKER_BUILD_DIR"] {
      return URL(fileURLWithPath: override)
    }
    var url = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    while url.path != "/" {
      url.deleteLastPathComponent()
      if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("chatbroker").path)
      {
        return url
      }
    }
    fatalError("chatbroker binary not found near the test executable; run swift build first")
  }()

  public static func path(_ name: String) -> String {
    directory.appendingPathComponent(name).path
  }
}
