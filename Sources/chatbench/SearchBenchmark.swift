import Foundation
import Glibc
import LineProtocol
import Posix

/// `chatbench search`: `SEARCH *` for two words on a broker holding a
/// million messages (chatbroker(7), `SEARCH`), and what the index costs in
/// memory. The broker starts from a journal this writes (far faster than
/// sending the messages), with texts of 8 to 12 words drawn from a Zipf
/// vocabulary, one word in twenty accented. Memory per message is the
/// resident size after start-up less that of an empty broker, divided by
/// the messages; the index's part is what the same messages cost beyond
/// texts of the same length that hold no word at all.
enum SearchBenchmark {
  static let mode = BenchmarkMode(
    name: "search",
    synopsis: "[--messages N] [--rooms R] [--queries Q] [--vocabulary V]",
    run: run)

  static func run(_ arguments: [String]) -> ExitCode {
    guard
      let options = parseOptions(
        arguments, known: ["--messages", "--rooms", "--queries", "--vocabulary"]),
      let messages = parseCount(options["--messages"] ?? "1000000"),
      let rooms = parseCount(options["--rooms"] ?? "200"),
      let queries = parseCount(options["--queries"] ?? "1000"),
      let vocabularySize = parseCount(options["--vocabulary"] ?? "50000")
    else { return .usage }
    guard messages / rooms <= 10_000 else {
      printError("chatbench search: at most 10000 messages a room are kept; give more --rooms")
      return .usage
    }
    do {
      let vocabulary = Vocabulary(size: vocabularySize)
      print(
        "SEARCH * <two words> on \(messages) messages in \(rooms) rooms, "
          + "\(vocabularySize) words (Zipf), \(queries) queries")
      let empty = try startedBroker(messages: 0, rooms: rooms, vocabulary: vocabulary, words: true)
      let baseline = empty.broker.residentBytes
      empty.broker.stop()
      let plain = try startedBroker(
        messages: messages, rooms: rooms, vocabulary: vocabulary, words: false)
      let withoutWords = plain.broker.residentBytes
      plain.broker.stop()
      let started = try startedBroker(
        messages: messages, rooms: rooms, vocabulary: vocabulary, words: true)
      let withWords = started.broker.residentBytes
      let timing = try timeQueries(started.broker, count: queries, vocabulary: vocabulary)
      started.broker.stop()
      let total = Double(withWords - baseline) / Double(messages)
      let index = Double(withWords - withoutWords) / Double(messages)
      print(
        "start-up: ready after \(format(started.seconds, 1)) s (\(format(plain.seconds, 1)) s without words), index built after \(format(started.indexed, 1)) s; query p50 \(format(timing.p50, 2)) ms  "
          + "p99 \(format(timing.p99, 2)) ms  max \(format(timing.max, 2)) ms; "
          + "\(format(timing.meanResults, 1)) results a query, \(timing.more) with MORE")
      print(
        "memory per message \(Int(total)) bytes (RSS delta / messages), "
          + "of which the index \(Int(index)) bytes  load \(loadAverage())")
      return .success
    } catch {
      printError("chatbench search: \(error)")
      return .software
    }
  }

  /// Words to draw, the commonest first, with the Zipf weights' running
  /// sums for drawing by binary search.
  struct Vocabulary {
    let words: [String]
    private let cumulative: [Double]

    init(size: Int) {
      var random = SplitMix64(seed: 25)
      let letters = Array("abcdefghijklmnopqrstuvwxyz")
      var seen: Set<String> = []
      var words: [String] = []
      while words.count < size {
        let length = Int.random(in: 3...9, using: &random)
        var word = String((0..<length).map { _ in letters.randomElement(using: &random)! })
        if random.chance(5) { word += "é" }
        if seen.insert(word).inserted { words.append(word) }
      }
      self.words = words
      var sum = 0.0
      cumulative = (1...size).map { rank in
        sum += 1 / Double(rank)
        return sum
      }
    }

    func draw(using random: inout SplitMix64) -> String {
      let target = Double.random(in: 0..<cumulative.last!, using: &random)
      var (low, high) = (0, cumulative.count - 1)
      while low < high {
        let middle = (low + high) / 2
        if cumulative[middle] <= target { low = middle + 1 } else { high = middle }
      }
      return words[low]
    }
  }

  /// A broker started on a journal of `messages` messages: with `words`,
  /// texts drawn from the vocabulary; without, texts as long of
  /// punctuation only, which the index has nothing to take from.
  static func startedBroker(
    messages: Int, rooms: Int, vocabulary: Vocabulary, words: Bool
  ) throws -> (broker: ServerUnderTest, seconds: Double, indexed: Double) {
    var random = SplitMix64(seed: 1)
    let start = wallMilliseconds() - Int64(messages) * 10
    let directory = try journalDirectory(records: messages) { index in
      let id = String(index + 1, radix: 36)
      var text = (0..<Int.random(in: 8...12, using: &random)).map { _ in
        vocabulary.draw(using: &random)
      }.joined(separator: " ")
      if !words { text = String(repeating: "-", count: text.utf8.count) }
      let time = Timestamp(milliseconds: start + Int64(index) * 10)
      let room = "#room\(index % rooms)"
      return
        #"{"type":"message","id":"\#(id)","to":"\#(room)","from":"bench","at":"\#(time)","text":"\#(text)"}"#
    }
    let started = monotonicNanoseconds()
    // A million messages to index on a loaded machine: minutes, not 30 s.
    let broker = try ServerUnderTest.chatbroker(
      ["--no-sync"], directory: directory, startSeconds: 600)
    let fd = try connectUnix(broker.socketPath)
    _ = try readLines(fd, count: 1)
    let ready = Double(monotonicNanoseconds() - started) / 1e9
    // The words are indexed after start-up (chatbroker(7), SEARCH): until
    // then a search of everything is LIMIT. The memory is read after.
    while true {
      writeAll(fd, Array("SEARCH * benchmark\n".utf8))
      guard let answer = try readLines(fd, count: 1).first else { break }
      if !answer.hasPrefix("ERR SEARCH LIMIT") { break }
      usleep(10_000)
    }
    close(fd)
    return (broker, ready, Double(monotonicNanoseconds() - started) / 1e9)
  }

  /// Sends `count` searches for two words drawn from the vocabulary, one
  /// at a time, each timed from its request to its `OK SEARCH`.
  static func timeQueries(_ broker: ServerUnderTest, count: Int, vocabulary: Vocabulary) throws
    -> (p50: Double, p99: Double, max: Double, meanResults: Double, more: Int)
  {
    let fd = try connectUnix(broker.socketPath)
    defer { close(fd) }
    _ = try readLines(fd, count: 1)
    var random = SplitMix64(seed: 2)
    var samples: [Double] = []
    var results = 0
    var more = 0
    var pending: [UInt8] = []
    for _ in 0..<count {
      let first = vocabulary.draw(using: &random)
      let second = vocabulary.draw(using: &random)
      let began = monotonicNanoseconds()
      writeAll(fd, Array("SEARCH * \(first) \(second)\n".utf8))
      let reply = try readReply(fd, &pending)
      samples.append(Double(monotonicNanoseconds() - began) / 1e6)
      guard let last = reply.last, last.hasPrefix("OK SEARCH") else {
        throw BenchError("SEARCH answered \(reply.last ?? "nothing")")
      }
      results += reply.count - 1
      if last.contains(" MORE ") { more += 1 }
    }
    samples.sort()
    return (
      percentile(samples, 0.5), percentile(samples, 0.99), samples.last ?? .nan,
      Double(results) / Double(count), more
    )
  }

  /// The lines of one reply, up to its `OK` or `ERR`.
  static func readReply(_ fd: Int32, _ pending: inout [UInt8]) throws -> [String] {
    var lines: [String] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    let deadline = Date().addingTimeInterval(60)
    while true {
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        pending.removeSubrange(...newline)
        lines.append(line)
        if line.hasPrefix("OK ") || line.hasPrefix("ERR ") { return lines }
      }
      guard Date() < deadline else { throw BenchError("timed out waiting for OK SEARCH") }
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { throw BenchError("connection closed") }
      pending.append(contentsOf: buffer[0..<count])
    }
  }
}
