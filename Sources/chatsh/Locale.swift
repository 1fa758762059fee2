#if canImport(Glibc)
  import Glibc
#endif

/// chatsh reads, sends and shows UTF-8 whatever the locale says: without a
/// UTF-8 LC_CTYPE (LANG unset, `C`, `POSIX`), ncurses and wcwidth(3) would
/// drop every non-ASCII character, so chatsh uses `C.UTF-8` for them
/// instead (chatsh(1), "ENVIRONMENT"). Returns the note to show once on
/// the screen when it did so, nil when the locale was UTF-8 already.
func useUTF8Locale() -> String? {
  if isUTF8Codeset() { return nil }
  let names = ["C.UTF-8", "C.utf8", "en_US.UTF-8"]
  guard names.contains(where: { setlocale(LC_CTYPE, $0) != nil }) else {
    return "your locale is not UTF-8 and C.UTF-8 is not installed: non-ASCII text may not show"
  }
  return "your locale (LANG, LC_ALL, LC_CTYPE) is not UTF-8: chatsh uses C.UTF-8 for the screen"
}

private func isUTF8Codeset() -> Bool {
  guard let codeset = nl_langinfo(nl_item(CODESET)) else { return false }
  let name = String(cString: codeset).lowercased()
  return name == "utf-8" || name == "utf8"
}
