/// Exit statuses: 0, 1, and sysexits(3) for the rest, shared by
/// chatbroker, chatsh, chatbench and chatfuzz so that each number means one
/// thing across the programs (the man pages list which each one uses).
public enum ExitCode: Int32, Sendable {
  case success = 0
  /// The program's own kind of failure: the broker answered ERR to chatsh,
  /// the fuzzer found something.
  case failure = 1
  /// EX_USAGE: the command line is wrong.
  case usage = 64
  /// EX_DATAERR: the input data is wrong (a corrupt journal).
  case dataError = 65
  /// EX_NOINPUT: an input file is missing or unreadable.
  case noInput = 66
  /// EX_UNAVAILABLE: a service is not there (no broker answers).
  case unavailable = 69
  /// EX_SOFTWARE: an internal error (a benchmark's own check failed).
  case software = 70
  /// EX_OSERR: the system refused something (fork, a descriptor).
  case systemError = 71
  /// EX_CANTCREAT: a file, directory or socket cannot be created.
  case cannotCreate = 73
  /// EX_IOERR: reading or writing failed (the journal's disk).
  case ioError = 74
  /// EX_TEMPFAIL: try again later (another broker holds the lock or socket).
  case temporaryFailure = 75
  /// EX_NOPERM: not allowed.
  case noPermission = 77
  /// EX_CONFIG: the setup is unsafe or wrong (a directory others may write).
  case configuration = 78
}
