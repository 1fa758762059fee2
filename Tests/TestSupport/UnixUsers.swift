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

  /// The Unix group of the private-room tests (chatbroker(7), "Private
  /// rooms"): cbtest1 and cbtest2 are in it, cbtest3 is not.
  public static let group = "cbtestgrp"
  public static let groupMembers = ["cbtest1", "cbtest2"]

  /// Creates the users and the group if missing, and gives the group
  /// exactly its two members again (a test takes one out with
  /// ``removeFromGroup(_:)``); throws why it could not.
  public static func ensureGroup() throws {
    try ensure()
    if getgrnam(group) == nil {
      let result = try? runCommand(["/usr/sbin/groupadd", group])
      // Another test run may have created it meanwhile: only its absence counts.
      if getgrnam(group) == nil {
        throw TestFailure("groupadd \(group) failed: \(result?.errors ?? "did not run")")
      }
    }
    try gpasswd(["-M", groupMembers.joined(separator: ","), group])
  }

  /// Takes `user` out of the group in /etc/group, as an administrator
  /// would with `gpasswd -d`.
  public static func removeFromGroup(_ user: String) throws {
    try gpasswd(["-d", user, group])
  }

  private static func gpasswd(_ arguments: [String]) throws {
    let result = try runCommand(["/usr/bin/gpasswd"] + arguments)
    guard result.status == 0 else {
      throw TestFailure("gpasswd \(arguments.joined(separator: " ")) failed: \(result.errors)")
    }
  }
}
