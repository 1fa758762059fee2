import Foundation
import TestSupport
import Testing

/// tools/lint-man finds a quote that swallowed what follows it (Ql, Sq, Dq
/// and Qq quote the rest of their line, macros included), and the pages
/// have none.
@Suite("Man pages: quotes end where they should")
struct ManPageQuoteTests {
  static let mandoc = Tool.find("mandoc")

  @Test(
    "lint-man reports a quote holding a cross-reference or going on past a semicolon, and passes the pages",
    .enabled(if: mandoc != nil))
  func quotesEnd() throws {
    let directory = try TemporaryDirectory()
    let page = directory.path("bad.1")
    try """
    .Dd December 4, 2026
    .Dt BAD 1
    .Os
    .Sh NAME
    .Nm bad
    .Nd quotes
    .Sh DESCRIPTION
    .Pq IRC's Ql /me ; see Xr chatbroker 7 , Cm ACTION
    .Pq Ql RESCHEDULE Ar id Li skip No in Xr chatbroker 7 ,
    .Ql sunday ; a name completed at the start of the
    line.
    .Po
    .Ql /me ;
    see
    .Xr chatbroker 7
    .Pc
    .Ql chat.room. Ar room . Ar node ,
    """.write(toFile: page, atomically: true, encoding: .utf8)
    let lint = Repository.path("tools/lint-man")
    let bad = try runCommand([lint, page])
    #expect(bad.status == 1)
    #expect(
      bad.output.split(separator: "\n").map {
        $0.replacingOccurrences(of: directory.path(""), with: "")
      } == [
        "bad.1:8: the quote opened here goes on past its \";\"",
        "bad.1:9: a cross-reference inside the quote opened here",
        "bad.1:10: the quote opened here goes on past its \";\"",
      ], "\(bad.output)")
    let pages = try runCommand([lint])
    #expect(pages.status == 0, "\(pages.output)")
  }
}
