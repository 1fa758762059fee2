import Glibc

/// A directory or file the broker must not use, because someone else could
/// change what is in it. The text says what is wrong and how to fix it.
public struct UnsafePath: Error, CustomStringConvertible, Sendable {
  public let description: String

  public init(_ description: String) {
    self.description = description
  }
}

/// The directories the broker keeps its socket and its journal in, checked
/// in the manner of OpenSSH's StrictModes and tmux's socket directory: the
/// directory itself must belong to the broker's user (or root) and be
/// writable by nobody else, and so must every directory above it, except
/// that a sticky one such as `/tmp` may be writable by all (nobody can
/// rename or remove what is ours in it). Otherwise another user could swap
/// the socket for their own listener, or the journal for a link to a file
/// the broker would then overwrite. See chatbroker(8), FILES.
public enum PrivateDirectory {
  /// What a directory holds, for the messages.
  public enum Role: String, Sendable {
    case socket = "socket directory"
    case state = "state directory"
  }

  /// Creates `path` with `mode` if it is missing (and its missing parents
  /// with 0755), then checks it and every directory above it. With
  /// `makePrivate` set, a directory that others may read or search is made
  /// 0700; the returned notices say what was changed, to be logged.
  public static func prepare(
    _ given: String, role: Role, mode: mode_t, makePrivate: Bool
  ) throws(PrivateDirectoryError) -> [String] {
    let path =
      given.hasPrefix("/") ? given : currentDirectory() + (given == "." ? "" : "/" + given)
    try create(path, mode: mode)
    guard let resolved = realpath(path, nil) else {
      throw .system(SystemError("realpath", subject: path))
    }
    let real = String(cString: resolved)
    free(resolved)
    // The path as given and the one it leads to: a link on the way is as
    // good as the directory that holds it, and the target as its parents.
    try checkAncestors(of: path, role: role, directory: path)
    if real != path { try checkAncestors(of: real, role: role, directory: path) }

    var status = stat()
    guard stat(real, &status) == 0 else { throw .system(SystemError("stat", subject: path)) }
    guard status.st_mode & S_IFMT == S_IFDIR else {
      throw .unsafe(UnsafePath("the \(role.rawValue) \(path) is not a directory; remove it"))
    }
    try checkOwner(status, of: path, what: "the \(role.rawValue) \(path)", role: role)
    if status.st_mode & 0o022 != 0 {
      throw .unsafe(
        UnsafePath(
          "the \(role.rawValue) \(path) is writable by others (mode \(octal(status.st_mode))): "
            + "anyone could replace what the broker keeps there; make it writable by you "
            + "alone (chmod go-w \(path)) or use another directory\(hint(role))"))
    }
    guard makePrivate, status.st_mode & 0o077 != 0 else { return [] }
    guard chmod(real, 0o700) == 0 else { throw .system(SystemError("chmod", subject: path)) }
    return [
      "the \(role.rawValue) \(path) was readable by others (mode \(octal(status.st_mode))), "
        + "made 0700"
    ]
  }

  /// Checks a file found in a private directory (the journal, the lock
  /// file), opened with `O_NOFOLLOW`: it must be a regular file of the
  /// broker's user.
  static func checkFile(_ fd: Int32, path: String) throws(UnsafePath) -> stat {
    var status = stat()
    guard fstat(fd, &status) == 0 else {
      throw UnsafePath("\(path): \(String(cString: strerror(errno)))")
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw UnsafePath("\(path) is not a regular file; remove it")
    }
    guard status.st_uid == geteuid() else {
      throw UnsafePath(
        "\(path) belongs to \(userName(status.st_uid)), not to \(userName(geteuid())), "
          + "who runs the broker; remove it, or give it to \(userName(geteuid())) with chown")
    }
    return status
  }

  /// The message for a link where the broker expects a file of its own.
  static func linkRefused(_ path: String) -> UnsafePath {
    UnsafePath(
      "\(path) is a symbolic link; chatbroker never follows links in its state directory, "
        + "so that nobody can make it write elsewhere: remove the link")
  }

  private static func create(_ path: String, mode: mode_t) throws(PrivateDirectoryError) {
    var parent = ""
    for component in path.split(separator: "/").dropLast() {
      parent += "/" + component
      mkdir(parent, 0o755)
    }
    if mkdir(path, mode) == 0 {
      // Exactly `mode`, whatever the umask: the socket's mode must work.
      guard chmod(path, mode) == 0 else { throw .system(SystemError("chmod", subject: path)) }
    } else if errno != EEXIST {
      throw .system(SystemError("mkdir", subject: path))
    }
  }

  /// Every directory above `path`, and `path` itself when it is a link.
  private static func checkAncestors(
    of path: String, role: Role, directory: String
  ) throws(PrivateDirectoryError) {
    var prefix = ""
    let components = path.split(separator: "/")
    for (index, component) in components.enumerated() {
      prefix += "/" + component
      let isLast = index == components.count - 1
      var status = stat()
      guard lstat(prefix, &status) == 0 else {
        throw .system(SystemError("lstat", subject: prefix))
      }
      let isLink = status.st_mode & S_IFMT == S_IFLNK
      if isLast && !isLink { return }
      let what = "\(prefix) (on the way to the \(role.rawValue) \(directory))"
      try checkOwner(status, of: prefix, what: what, role: role)
      if !isLink && status.st_mode & 0o022 != 0 && status.st_mode & S_ISVTX == 0 {
        throw .unsafe(
          UnsafePath(
            "\(what) is writable by others (mode \(octal(status.st_mode))) and not sticky: "
              + "anyone could replace what is below it; make it writable by its owner only "
              + "(chmod go-w \(prefix)) or use another directory\(hint(role))"))
      }
    }
  }

  private static func checkOwner(
    _ status: stat, of path: String, what: String, role: Role
  ) throws(PrivateDirectoryError) {
    let me = geteuid()
    guard status.st_uid != me && status.st_uid != 0 else { return }
    let owners =
      me == 0 ? "root, who runs the broker" : "\(userName(me)), who runs the broker, or root"
    throw .unsafe(
      UnsafePath(
        "\(what) belongs to \(userName(status.st_uid)), not to \(owners), so they could read "
          + "or replace what the broker keeps there; remove it (as its owner or root) or use "
          + "another directory\(hint(role))"))
  }

  private static func hint(_ role: Role) -> String {
    switch role {
    case .socket: " with --socket or XDG_RUNTIME_DIR"
    case .state: " with --state-dir"
    }
  }

  private static func currentDirectory() -> String {
    guard let cwd = getcwd(nil, 0) else { return "" }
    defer { free(cwd) }
    return String(cString: cwd)
  }

  static func userName(_ uid: uid_t) -> String {
    let name = SystemUsers().name(of: uid)
    return name == "uid\(uid)" ? "uid \(uid)" : "\(name) (uid \(uid))"
  }

  static func octal(_ mode: mode_t) -> String {
    let digits = String(mode & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }
}

/// Why ``PrivateDirectory/prepare(_:role:mode:makePrivate:)`` failed: the
/// directory is not safe (exit 78), or could not be made (exit 73).
public enum PrivateDirectoryError: Error, CustomStringConvertible {
  case unsafe(UnsafePath)
  case system(SystemError)

  public var description: String {
    switch self {
    case .unsafe(let reason): reason.description
    case .system(let error): error.description
    }
  }
}
