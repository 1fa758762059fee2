/// The broker's system calls, descriptors, Unix sockets and their one error
/// type (``SystemError``) come from the Posix support layer. Re-exported:
/// the library's API throws `SystemError`, so every caller needs it, and
/// each of the broker's files reaches `systemCall` without an import.
@_exported import Posix
