import Foundation

// Before anything starts a thread: SIGTERM and SIGINT are blocked in every
// thread and read by Dispatch signal sources (see Daemon.handleSignals).
// Also clears whatever else a parent left blocked.
var blocked = sigset_t()
sigemptyset(&blocked)
sigaddset(&blocked, SIGTERM)
sigaddset(&blocked, SIGINT)
pthread_sigmask(SIG_SETMASK, &blocked, nil)

// chatbroker: see Daemon.swift for the start-up sequence and chatbroker(8).
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .exit(let message, let status):
  FileHandle(fileDescriptor: status == .success ? 1 : 2).write(Data((message + "\n").utf8))
  exit(status.rawValue)
case .run(let options):
  Daemon(options: options).run()
}
