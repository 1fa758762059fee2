import Foundation
import Glibc
import TestSupport
import Testing

@Suite("irssi on the IRC socket", .serialized)
struct IrssiTests {
  @Test(
    "irssi, as a real Unix user, sees history on join, talks with a line user both ways and gets a scheduled line (real time)",
    UnixUsers.required,
    .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/irssi"), "needs irssi"))
  func irssiTalksRealTime() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let person = try broker.connect(as: "cbtest2")
    _ = try person.request("JOIN #lab")
    _ = try person.request("SAY #lab said before you came")

    let irssi = try broker.irssi(as: "cbtest1")
    try irssi.enter("/join #lab")
    try irssi.waitFor("cbtest1 [cbtest1@")
    try irssi.waitFor("<@cbtest2> said before you came")
    _ = try person.expect("JOIN #lab cbtest1")

    _ = try person.request("SAY #lab hello irssi")
    try irssi.waitFor("<@cbtest2> hello irssi")
    try irssi.enter("hello line protocol")
    #expect(try person.expect("MSG #lab ").hasSuffix(" cbtest1 :hello line protocol"))

    try irssi.enter("/msg sched|bot at +2s #lab a scheduled hello")
    try irssi.waitFor("< cbtest1> a scheduled hello", within: 20)
    #expect(try person.expect("MSG #lab ").hasSuffix(" cbtest1 :a scheduled hello"))
  }
}
