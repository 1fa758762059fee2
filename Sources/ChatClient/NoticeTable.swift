/// A notice of two columns, `/help` and `/scheduled`: lines of text before
/// and after, and between them items of a lead (a command's syntax, or a
/// scheduled message's id, times and target) and a text. It is laid out
/// when drawn, at the width the terminal has then, so a text that wraps
/// goes on under its own column, not under the lead.
public struct NoticeTable: Equatable, Sendable {
  public struct Item: Equatable, Sendable {
    public var lead: String
    public var text: String

    public init(lead: String, text: String) {
      self.lead = lead
      self.text = text
    }
  }

  public var before: [String]
  public var items: [Item]
  public var after: [String]

  public init(before: [String] = [], items: [Item], after: [String] = []) {
    self.before = before
    self.items = items
    self.after = after
  }

  /// The least the texts get: 30 columns, or half of what a notice has on
  /// a terminal too narrow for that (under 62 columns).
  public static let textMinimum = 30

  /// The table as one text, each text after the widest lead and two
  /// spaces, the way it reads where nothing wraps.
  public var text: String {
    let widest = items.map { TextWidth.of($0.lead) }.max() ?? 0
    let rows = items.map { item in
      item.lead + String(repeating: " ", count: widest - TextWidth.of(item.lead) + 2) + item.text
    }
    return (before + rows + after).joined(separator: "\n")
  }

  /// The rows of the table in `width` columns (what a notice's rows have
  /// after their two columns of indent), every text a hanging indent at
  /// one column.
  ///
  /// The rule: the text column starts two spaces after the widest lead,
  /// but never so far right that fewer than ``textMinimum`` columns (half
  /// of `width` when that is less) are left for the texts. A lead wider
  /// than that column, as in a man page's list, gets a row of its own and
  /// its text starts on the next row, under the column. So at 80 columns
  /// every command of `/help` has its description beside it, and at 50
  /// the long ones have theirs below, 24 columns wide rather than 14.
  /// Lead and text are sanitized here, as every notice is when drawn.
  func rows(width: Int, style: Style) -> [[Segment]] {
    let width = max(width, 1)
    let leads = items.map { sanitized($0.lead).trimmingTrailingSpaces }
    let widest = leads.map { TextWidth.of($0) }.max() ?? 0
    let column = max(min(widest + 2, width - min(Self.textMinimum, width / 2)), 0)
    var rows: [[Segment]] = []
    for line in before { rows += wrapped(line, width: width, style: style) }
    for (lead, item) in zip(leads, items) {
      let text = StyledText(sanitized(item.text), style: style).wrapped(width: width - column)
      let indent = String(repeating: " ", count: column)
      var first = true
      if TextWidth.of(lead) + 2 > column {
        rows += wrapped(lead, width: width, style: style)
        first = false
      }
      for line in text {
        let left =
          first ? lead + String(repeating: " ", count: column - TextWidth.of(lead)) : indent
        rows.append([Segment(left, style)] + StyledText.segments(line))
        first = false
      }
    }
    for line in after { rows += wrapped(line, width: width, style: style) }
    return rows
  }

  private func wrapped(_ line: String, width: Int, style: Style) -> [[Segment]] {
    StyledText(sanitized(line), style: style).wrapped(width: width).map(StyledText.segments)
  }
}

extension String {
  /// Without the spaces at its end (the padding of a table's column).
  fileprivate var trimmingTrailingSpaces: String {
    var text = self
    while text.last == " " { text.removeLast() }
    return text
  }
}
