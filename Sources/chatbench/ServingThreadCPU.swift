import Foundation
import Glibc

/// The processor time of the broker's serving thread, the one that runs
/// the engine and writes to every socket (`chatbroker-poll`; `top -H`
/// shows it), read from `/proc/<pid>/task/<tid>/stat` around a run: its
/// cost per request does not depend on the client, on the number of cores
/// or on what else the machine runs, as a rate does.
struct ServingThreadCPU {
  let path: String

  /// The serving thread of process `pid`, found by its name, waiting up
  /// to five seconds for it: a broker listens before it has replayed its
  /// journal and started serving. Nil when it has none (a peer such as
  /// Redis).
  init?(pid: Int32) {
    for _ in 0..<100 {
      if let path = Self.servingThreadStat(pid: pid) {
        self.path = path
        return
      }
      usleep(50_000)
    }
    return nil
  }

  private static func servingThreadStat(pid: Int32) -> String? {
    let tasks = "/proc/\(pid)/task"
    guard let directory = opendir(tasks) else { return nil }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
      let tid = withUnsafeBytes(of: entry.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard tid.first?.isNumber == true else { continue }
      let name = procText("\(tasks)/\(tid)/comm").trimmingCharacters(in: .newlines)
      if name == "chatbroker-poll" { return "\(tasks)/\(tid)/stat" }
    }
    return nil
  }

  /// User and system time so far, in seconds (clock ticks of 10 ms on
  /// Linux: a run of a second or more keeps the error near 1%).
  var seconds: Double {
    // proc(5): the fields after the command's closing parenthesis start
    // at the third, state; utime and stime are the 14th and 15th.
    let text = procText(path)
    guard let close = text.lastIndex(of: ")") else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12])
    else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }
}
