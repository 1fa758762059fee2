import LineProtocol
import TestSupport
import Testing

/// Series and changes on the real binary (chatbroker(7) "Series" and
/// "Changing a pending message").
@Suite("Series")
struct SeriesTests {
  @Test("EDIT and RESCHEDULE answer the new state; the author's other session gets it too")
  func changesReachOtherSessions() throws {
    let broker = try BrokerProcess().start()
    let author = try broker.connect()
    let other = try broker.connect()
    let started = try #require(
      author.request("SAYEVERY #team weekdays@09:00/Europe/Berlin :stand-up").last)
    #expect(started.words.count == 5 && started.words[4] == "weekdays@09:00/Europe/Berlin")
    let id = started.words[2]

    let edited = try author.request("EDIT \(id) :stand-up, room 2")
    #expect(edited.count == 2 && edited[0].hasPrefix("SCHED \(id) #team "), "\(edited)")
    #expect(edited[0].freeText == "stand-up, room 2" && edited[1].hasPrefix("OK EDIT \(id) "))
    #expect(try other.expect("SCHED ", timeout: 5) == edited[0])

    let moved = try author.request("RESCHEDULE \(id) daily@10:00/America/New_York")
    #expect(moved.first?.words[5] == "daily@10:00/America/New_York", "\(moved)")
    #expect(try other.expect("SCHED ", timeout: 5) == moved[0])
    #expect(try other.dataLines("SCHEDULED") == [moved[0]])

    let refused = try author.request("RESCHEDULE \(id) soon")
    #expect(refused.count == 1 && refused[0].hasPrefix("ERR RESCHEDULE BADTIME :"))
    #expect(try author.request("CANCEL \(id)") == ["OK CANCEL \(id)"])
    #expect(try other.dataLines("SCHEDULED").isEmpty)
  }

  @Test(
    "a series missed while the broker was stopped fires once at start, then waits a day (real time)"
  )
  func missedWhileStoppedRealTime() throws {
    let broker = try BrokerProcess().start()
    let author = try broker.connect()
    let due = (Int64(wallClockMilliseconds()) / 1000 + 2) * 1000
    let clock = String(Timestamp(milliseconds: due).description.dropFirst(11).prefix(8))
    let started = try #require(author.request("SAYEVERY #late daily@\(clock)/UTC :late").last)
    #expect(started.words[3] == Timestamp(milliseconds: due).description)
    #expect(try broker.stop() == 0)
    try waitUntil(timeout: 5, "the due instant to pass") {
      wallClockMilliseconds() > Double(due) + 200
    }
    try broker.start()
    let client = try broker.connect()
    try waitUntil(timeout: 5, "the catch-up delivery") {
      try client.dataLines("HISTORY #late").count == 1
    }
    let pending = try client.dataLines("SCHEDULED")
    #expect(pending.count == 1)
    #expect(pending.first?.words[3] == Timestamp(milliseconds: due + 86_400_000).description)
  }
}

/// The newer rule forms and changes on the real binary (chatbroker(7),
/// "Series", SCHEDULED, RESCHEDULE), across a restart.
@Suite("Series: rrule:, short forms, NEXT, skip and now on the real binary")
struct SeriesFormsTests {
  @Test(
    "an rrule: and a short form start, list their next times, skip, survive a restart, send now")
  func formsAndChanges() throws {
    let broker = try BrokerProcess().start(environment: ["TZ": ":Europe/Berlin"])
    let author = try broker.connect()
    let reader = try broker.connect()
    _ = try reader.request("JOIN #team")
    let rrule = try #require(
      author.request("SAYEVERY #team rrule:FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=17 :wrap-up").last)
    #expect(rrule.hasPrefix("OK SAYEVERY "), "\(rrule)")
    #expect(rrule.words.last?.hasPrefix("rrule:FREQ=MONTHLY;BYHOUR=17;BYDAY=-1FR;DTSTART=") == true)
    #expect(rrule.words.last?.hasSuffix("/Europe/Berlin") == true, "the broker's zone, from TZ")
    let id = rrule.words[2]
    let short = try #require(author.request("SAYEVERY #team daily@09:00,17:00/UTC :twice").last)
    #expect(short.words.last == "daily@09:00,17:00/UTC")
    let next = try author.dataLines("SCHEDULED \(short.words[2]) NEXT 4")
    #expect(next.count == 4)
    #expect(
      next.map { String($0.words[3].dropFirst(11).prefix(5)) }.sorted() == [
        "09:00", "09:00", "17:00", "17:00",
      ])
    let due = try #require(author.dataLines("SCHEDULED \(id) NEXT 2").map { $0.words[3] }.last)
    let skipped = try author.request("RESCHEDULE \(id) skip")
    #expect(skipped.last == "OK RESCHEDULE \(id) \(due)", "the second becomes the next")
    try broker.restart()
    let again = try broker.connect()
    #expect(try again.dataLines("SCHEDULED \(id) NEXT 1").first?.words[3] == due, "after a restart")
    let watcher = try broker.connect()
    _ = try watcher.request("JOIN #team")
    #expect(
      try again.request("RESCHEDULE \(short.words[2]) now").last?.hasPrefix("OK RESCHEDULE ")
        == true)
    let delivered = try watcher.expect("MSG #team ", timeout: 5)
    #expect(delivered.freeText == "twice")
    #expect(try again.dataLines("SCHEDULED").count == 2, "both series go on")
  }
}
