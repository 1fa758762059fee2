/// The version shown by `--version` and in every `HELLO` line: the
/// broker's, and the line protocol's it speaks (chatbroker(7), `HELLO`).
public let chatbrokerVersion = "1.6.0"
