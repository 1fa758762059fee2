/// The version shown by `--version` and in every `HELLO` line.
public let chatbrokerVersion = "1.3.0"

/// The version of the line protocol; `HELLO` carries the broker version,
/// whose major number follows this.
public let protocolVersion = 1
