import Foundation
import Glibc
import Testing

/// Real Unix users for the identity tests, created once per test run when
/// running as root (idempotent: existing ones are kept). Tests that need them
/// carry ``UnixUsers/required``, which skips them with the reason otherwise.
public enum UnixUsers {
  public static let names = ["cbtest1", "cbtest2", "cbtest3"]

  public static let isRoot = getuid() == 0

  public static var required: ConditionTrait {
    rootOnly("to create Unix users and connect as them with setpriv")
  }

  /// Skips a test, saying why, unless the tests run as root.
  public static func rootOnly(_ why: String) -> ConditionTrait {
    .enabled(if: isRoot, "needs root \(why)")
  }

  /// Creates the users if missing; throws why it could not.
  public static func ensure() throws {
    try created.get()
  }

  private static let created: Result<Void, TestFailure> = {
    for name in names where getpwnam(name) == nil {
      let result = try? runCommand([
        "/usr/sbin/useradd", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin",
        name,
      ])
      // Another test run may have created it meanwhile: only its absence counts.
      if getpwnam(name) == nil {
        return .failure(TestFailure("useradd \(name) failed: \(result?.errors ?? "did not run")"))
      }
    }
    return .success(())
  }()
}
