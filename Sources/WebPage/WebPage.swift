/// The chat page the browser door serves (chatbroker(8), `--web-listen`):
/// the plain files of `page/`, compiled into the binary by SwiftPM
/// (`embedInCode`), so that `.build/release/chatbroker` and an installed
/// copy serve the same page with nothing to find at run time, and the
/// files stay plain, editable files with no build step of their own.
public enum WebPage {
  /// One file of the page: its bytes and its `Content-Type`.
  public struct File: Sendable {
    public let bytes: [UInt8]
    public let contentType: String
  }

  /// The file served for the path of a `GET` (without its query), or nil:
  /// `/` is `index.html`; only the page's own files exist.
  public static func file(at path: String) -> File? {
    switch path {
    case "/":
      File(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8")
    case "/app.js":
      File(bytes: PackageResources.app_js, contentType: "text/javascript; charset=utf-8")
    case "/app.css":
      File(bytes: PackageResources.app_css, contentType: "text/css; charset=utf-8")
    case "/icon.svg":
      File(bytes: PackageResources.icon_svg, contentType: "image/svg+xml")
    default:
      nil
    }
  }
}
