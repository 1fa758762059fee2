import ChatClient
import Foundation
import LineProtocol
import Posix

#if canImport(Glibc)
  import Glibc
#endif

/// What a reply of the broker answers, in the order the requests went out.
private enum SayReply: Equatable {
  /// `HISTORY target 1`: the newest id before anything of ours.
  case anchor
  /// `HISTORY target 1000 AFTER id` after a reconnect: which of the lines
  /// in flight the broker has.
  case missed
  case say(String)
}

extension ScriptMode {
  /// Connects, trying again with backoff until `deadline`; says once on
  /// standard error that it is waiting.
  func connectWaiting(until deadline: Date, announced: inout Bool) throws(ScriptFailure) -> (
    connection: BrokerConnection, user: String
  ) {
    var attempt = 0
    while true {
      do {
        return try connectSayingHello()
      } catch {
        guard case .unavailable(let message) = error, Date() < deadline else { throw error }
        if !announced {
          let seconds = Int(deadline.timeIntervalSinceNow.rounded(.up))
          complain(
            (message.split(separator: "\n").first.map(String.init) ?? message)
              + "; waiting up to \(seconds) s for it (--wait)")
          announced = true
        }
        let delay = Double(reconnectDelays[min(attempt, reconnectDelays.count - 1)])
        let pause = min(delay, max(deadline.timeIntervalSinceNow, 0))
        usleep(UInt32(pause * 1_000_000))
        attempt += 1
      }
    }
  }

  /// `chatsh say TARGET` with the text from the arguments (`lines`) or, when
  /// nil, from standard input, one message a line, cleaned as build output
  /// (``BuildOutput``). Requests are pipelined. When the broker goes away it
  /// waits up to `wait` seconds for it to come back, then sends again what
  /// it had not acknowledged, except what the broker's history shows was
  /// delivered: nothing read is lost, nothing is sent twice, the order stays.
  /// `prepared`: the messages themselves (`say --block`), sent as they are.
  func sayLines(
    target: String, lines given: [String]?, prepared: [String] = [], wait: Int
  ) throws(ScriptFailure) -> ExitCode {
    let target = try checked(target, Target.init)
    var queue: [String] = prepared  // read, not sent yet
    var inFlight: [String] = []  // sent on this connection, not answered
    var replies: [SayReply] = []
    var anchor: String?
    var refused = 0
    var inputOpen = given == nil && prepared.isEmpty
    var partial: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)

    func enqueue(_ line: String) {
      let text = BuildOutput.clean(line)
      guard !text.isEmpty else { return }
      queue += BuildOutput.messages(saying: text, to: target)
    }
    for line in given ?? [] { enqueue(line) }

    var announced = false
    var (connection, me) = try connectWaiting(
      until: Date().addingTimeInterval(Double(wait)), announced: &announced)
    connection.send(.history(target, count: 1, anchor: nil))
    replies.append(.anchor)
    var resyncing = false
    var lastProgress = Date()
    var lastTaken: String?

    /// Giving up: what may not have been sent, on standard error (chatsh(1),
    /// say): the lines read and not acknowledged, those standard input has
    /// ready now, and whether more of it was never read.
    func reportUnsent() {
      if inputOpen {
        // What is there already; a writer still writing is not waited for.
        var ready = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        while poll(&ready, 1, 0) > 0, ready.revents & Int16(POLLIN) != 0 {
          let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
          guard count > 0 else {
            inputOpen = false
            break
          }
          partial.append(contentsOf: buffer[..<count])
        }
        var start = 0
        while let newline = partial[start...].firstIndex(of: UInt8(ascii: "\n")) {
          enqueue(String(decoding: partial[start..<newline], as: UTF8.self))
          start = newline + 1
        }
        partial.removeFirst(start)
        if !inputOpen && !partial.isEmpty { enqueue(String(decoding: partial, as: UTF8.self)) }
      }
      let unsent = inFlight + queue
      let taken =
        lastTaken.map { "the last line the broker took was “\($0)”" } ?? "the broker took no line"
      if unsent.isEmpty {
        complain("no line read was left unsent; \(taken)")
      } else {
        complain("these \(unsent.count) lines may not have been sent (\(taken)):")
        for line in unsent { writeAll(2, line + "\n") }
      }
      if inputOpen {
        complain("standard input was not read to its end: what comes after these was not sent")
      }
    }

    while true {
      // Answers, in request order.
      while let line = connection.bufferedLine() {
        if let message = line.historyMessage {
          if replies.first == .missed {
            // Our lines the broker has are the first ones in flight, in order.
            anchor = message.id
            if message.user == me, inFlight.first == message.text { inFlight.removeFirst() }
          } else if replies.first == .anchor {
            anchor = message.id
          }
        } else if line.isFinalReply, !replies.isEmpty {
          lastProgress = Date()
          switch replies.removeFirst() {
          case .anchor: break
          case .missed:
            queue = inFlight + queue
            inFlight = []
            resyncing = false
          case .say(let text):
            if let id = line.okFields?.first { anchor = id }
            if let (code, text) = line.refusal {
              refused += 1
              complain("\(code): \(text)")
            } else {
              lastTaken = text
            }
            if inFlight.first == text { inFlight.removeFirst() }
          }
        }
      }
      if !resyncing && !connection.readClosed {
        // Send what was read, keeping at most 512 lines unanswered.
        while !queue.isEmpty && inFlight.count < 512 {
          let text = queue.removeFirst()
          connection.send(
            replyTo.map { .reply(target, to: $0, text: text) }
              ?? (notice ? .notice(target, text: text) : .say(target, text: text)))
          inFlight.append(text)
          replies.append(.say(text))
        }
      }
      connection.flushIfPossible()
      if !inputOpen && queue.isEmpty && inFlight.isEmpty && replies.isEmpty { break }

      var lost = connection.readClosed
      if !lost {
        let readInput = inputOpen && !resyncing && queue.count < 512
        let events: [Int16]
        do {
          (events, _) = try connection.wait(
            extra: readInput ? [0] : [], timeoutMilliseconds: 1000)
        } catch {
          events = []
          lost = true
        }
        if readInput, let revents = events.first, revents != 0 {
          let received = try? ioCall("read") {
            buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
          }
          if case .processed(let count) = received, count > 0 {
            partial.append(contentsOf: buffer[..<count])
            var start = 0
            while let newline = partial[start...].firstIndex(of: UInt8(ascii: "\n")) {
              enqueue(String(decoding: partial[start..<newline], as: UTF8.self))
              start = newline + 1
            }
            partial.removeFirst(start)
          } else if case .wouldBlock = received {
            // Nothing after all: the next round polls again.
          } else {
            if !partial.isEmpty { enqueue(String(decoding: partial, as: UTF8.self)) }
            partial = []
            inputOpen = false
          }
        }
        if replies.isEmpty { lastProgress = Date() }
        // Closed: the next round reads what it answered before, then
        // reconnects. Silent for too long while answers are due: gone too.
        if Date().timeIntervalSince(lastProgress) > Double(replyTimeout) { lost = true }
      }
      guard lost else { continue }

      // The broker went away: wait for it, then ask what it has of ours.
      replies = []
      guard wait > 0 else {
        reportUnsent()
        throw .unavailable(
          ConnectionError.closed(
            path: socketPath,
            detail: "\(inFlight.count + queue.count) messages were not acknowledged"
          ).description)
      }
      complain("lost the connection to the broker; waiting up to \(wait) s for it (--wait)")
      announced = true
      do {
        (connection, me) = try connectWaiting(
          until: Date().addingTimeInterval(Double(wait)), announced: &announced)
      } catch {
        reportUnsent()
        throw error
      }
      complain("reconnected")
      lastProgress = Date()
      if inFlight.isEmpty {
        if anchor == nil {
          connection.send(.history(target, count: 1, anchor: nil))
          replies.append(.anchor)
        }
      } else {
        let after = anchor.flatMap(MessageID.init).map(HistoryAnchor.after)
        connection.send(.history(target, count: 1000, anchor: after))
        replies.append(.missed)
        resyncing = true
      }
    }
    return refused > 0 ? .failure : .success
  }
}

extension ScriptMode {
  /// `chatsh say --block TARGET`: the words, or all of standard input once
  /// it ends, as one message of several lines, or as few as hold it
  /// (``BuildOutput/blocks(of:to:)``), said once on standard error; then
  /// sent as `say` sends its lines, waiting for the broker likewise.
  func sayBlock(target: String, words: [String]?) throws(ScriptFailure) -> ExitCode {
    let checkedTarget = try checked(target, Target.init)
    let text: String
    if let words {
      text = words.joined(separator: " ")
    } else {
      var input: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        input.append(contentsOf: buffer[..<count])
      }
      text = String(decoding: input, as: UTF8.self)
    }
    let blocks = BuildOutput.blocks(of: text, to: checkedTarget)
    guard !blocks.isEmpty else {
      // As say: words are a TEXT to send; standard input may have had none.
      if words != nil { throw .usage("say: the TEXT is empty") }
      return .success
    }
    if blocks.count > 1 {
      let lines = blocks.reduce(0) { $0 + MessageBlock.lineCount($1) }
      complain("\(lines) lines sent as \(blocks.count) messages")
    }
    return try sayLines(target: target, lines: [], prepared: blocks, wait: wait)
  }
}
