import Foundation

// chatbroker: see Daemon.swift for the start-up sequence and chatbroker(8).
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .exit(let message, let status):
  FileHandle(fileDescriptor: status == 0 ? 1 : 2).write(Data((message + "\n").utf8))
  exit(status)
case .run(let options):
  Daemon(options: options).run()
}
