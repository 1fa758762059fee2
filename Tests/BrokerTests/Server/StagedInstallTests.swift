import Foundation
import TestSupport
import Testing

/// `make install DESTDIR=...` stages files for a package: it must not tell
/// the builder to enable units on the build host, as a real install does.
extension SystemdTests {
  @Test(
    "make install prints the systemctl enable hint for a real install, not under DESTDIR",
    .enabled(if: make != nil))
  func stagedInstallHint() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let binaries = "BIN_PATH=\(BuiltProducts.directory.path)"
    let staged = try Tool.run(
      Self.make!,
      ["-s", "-C", Repository.root, "install", "DESTDIR=" + run.path("stage"), "PREFIX=/usr"]
        + [binaries])
    #expect(staged.status == 0, "\(staged.output)")
    #expect(
      FileManager.default.fileExists(
        atPath: run.path("stage") + "/usr/lib/systemd/system/chatbroker.service"))
    #expect(!staged.output.contains("systemctl"), "\(staged.output)")

    let real = try Tool.run(
      Self.make!,
      ["-s", "-C", Repository.root, "install", "PREFIX=" + run.path("prefix"), binaries])
    #expect(real.status == 0, "\(real.output)")
    #expect(
      real.output.contains("systemctl daemon-reload && systemctl enable --now chatbroker.socket"))
  }
}
