import Foundation

/// The checkout the tests were built from (for systemd/, man/, the
/// Makefile, Fuzz/): the nearest directory above this file that holds
/// Package.swift, so that moving a test between folders changes nothing.
public enum Repository {
  public static let root: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
      url.deleteLastPathComponent()
      if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
        return url.path
      }
    }
    fatalError("no Package.swift above \(#filePath)")
  }()

  public static func path(_ relative: String) -> String { root + "/" + relative }
}
