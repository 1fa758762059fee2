// swift-tools-version:6.0
import PackageDescription

/// chatbroker: a chat broker for the people who share one Linux host.
///
/// No package dependencies: Foundation, Dispatch, Glibc, Swift Testing and
/// C libraries from Debian (through system-library targets) are all we use.
let package = Package(
  name: "chatbroker",
  products: [
    .executable(name: "chatbroker", targets: ["chatbroker"]),
    .executable(name: "chatsh", targets: ["chatsh"]),
    .executable(name: "chatbench", targets: ["chatbench"]),
    .executable(name: "chatfuzz", targets: ["chatfuzz"]),
    .executable(name: "limitserver", targets: ["limitserver"]),
    .library(name: "LineProtocol", targets: ["LineProtocol"]),
    .library(name: "Broker", targets: ["Broker"]),
    .library(name: "IRCProtocol", targets: ["IRCProtocol"]),
    // The failing disk chatfuzz --failing-syncs preloads into the broker it
    // starts: built with the rest, so no compiler is needed at run time.
    .library(name: "FaultySync", type: .dynamic, targets: ["CFaultySync"]),
  ],
  targets: [
    .target(name: "LineProtocol", dependencies: ["CICal"]),
    // libical's RFC 5545 recurrence rules, which `rrule:` series expand
    // with (chatbroker(7), "Series"); only LineProtocol's CalendarRule sees it.
    .systemLibrary(name: "CICal", pkgConfig: "libical", providers: [.apt(["libical-dev"])]),
    // The IRC message codec, numerics and capabilities: pure, like LineProtocol.
    .target(name: "IRCProtocol"),
    // C for what Swift's Glibc module hides (accept4, SO_PEERCRED, wcwidth,
    // malloc_trim) and for work in a forked child (spawn, connect as a user).
    .target(name: "CShims"),
    // What the programs and tests share below the protocol: system calls
    // and their errors, descriptors, Unix sockets, running other programs,
    // exit statuses and the default socket path.
    .target(name: "Posix", dependencies: ["CShims"]),
    .systemLibrary(
      name: "CSystemd",
      pkgConfig: "libsystemd",
      providers: [.apt(["libsystemd-dev"])]
    ),
    // No pkgConfig: ncursesw.pc adds -D flags that SwiftPM refuses with a
    // warning, and the module map already links the library.
    .systemLibrary(name: "CNcurses", providers: [.apt(["libncurses-dev"])]),
    // The NATS C client, for rooms shared across hosts (chatbroker(8),
    // "FEDERATION"); only the NatsLink target sees it.
    .systemLibrary(name: "CNats", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
    // WebSocket framing (libwslay) and the hashes and base64 of the
    // browser door's handshake and tokens (Nettle), from Debian.
    .systemLibrary(name: "CWslay", providers: [.apt(["libwslay-dev"])]),
    .systemLibrary(name: "CNettle", pkgConfig: "nettle", providers: [.apt(["nettle-dev"])]),
    // The chat page the browser door serves: plain files compiled in, so
    // the binary needs nothing beside it (WebPage.swift).
    .target(
      name: "WebPage",
      resources: [
        .embedInCode("page/index.html"), .embedInCode("page/app.js"),
        .embedInCode("page/app.css"), .embedInCode("page/icon.svg"),
      ]),
    // Release builds leave out the run-time exclusivity checks of class
    // properties: the engine and server are classes changed once per
    // recipient of every line, and the checks (a thread-local access set
    // each) cost about 7% of the serving thread under `chatbench fanout`
    // (`perf record`); without them fan-out at N = 100 delivers about 40%
    // more lines a second (3.3-3.9M to 5.3-5.5M). Debug builds, which every
    // test and sanitizer run uses, keep them; the compile-time checks stay
    // everywhere.
    .target(
      name: "Broker",
      dependencies: [
        "LineProtocol", "IRCProtocol", "CShims", "Posix", "CWslay", "CNettle", "WebPage",
      ],
      swiftSettings: [
        .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
      ]),
    // The JetStream link behind the Broker's FederationLink seam: libnats
    // stays here, and the engine sees only values.
    .target(name: "NatsLink", dependencies: ["Broker", "CNats"]),
    .executableTarget(name: "chatbroker", dependencies: ["Broker", "CSystemd", "NatsLink"]),
    // chatsh's logic (options, protocol client, rendering, line editing) lives
    // in ChatClient so tests can reach it; the executable keeps the terminal.
    .target(name: "ChatClient", dependencies: ["LineProtocol", "CShims", "Posix"]),
    .executableTarget(
      name: "chatsh", dependencies: ["ChatClient", "LineProtocol", "CNcurses", "Posix"]),
    .executableTarget(
      name: "chatbench", dependencies: ["Broker", "LineProtocol", "CShims", "Posix", "CNats"]),
    // The ceiling chatbench fanout measures the broker against: a bare C
    // epoll server that does only what fan-out cannot avoid. An executable
    // of the package, so that one `swift build -c release` builds it with
    // the broker, beside chatbench, and no compiler is needed at run time.
    .executableTarget(name: "limitserver"),
    // fdatasync(2) failing at a seeded rate, for LD_PRELOAD (faulty_sync.c).
    .target(name: "CFaultySync", linkerSettings: [.linkedLibrary("dl")]),
    // The protocol fuzzer: a library, so that the tests run it too.
    .target(name: "ProtocolFuzz", dependencies: ["Broker", "LineProtocol", "Posix"]),
    .executableTarget(name: "chatfuzz", dependencies: ["ProtocolFuzz"]),
    // What every test target shares: the broker and chatsh as processes,
    // line clients, the one bounded wait, seeded generators, temporary
    // directories, tmux terminals, the engine on virtual time.
    .target(
      name: "TestSupport", dependencies: ["Broker", "LineProtocol", "Posix", "ProtocolFuzz"],
      path: "Tests/TestSupport"),
    .testTarget(name: "LineProtocolTests", dependencies: ["LineProtocol", "TestSupport"]),
    .testTarget(name: "IRCProtocolTests", dependencies: ["IRCProtocol"]),
    // The integration tests start the real binaries, so they depend on them.
    .testTarget(
      name: "BrokerTests",
      dependencies: [
        "Broker", "LineProtocol", "IRCProtocol", "chatbroker", "ProtocolFuzz", "Posix",
        "TestSupport",
      ],
      // The chat page's tests drive Chromium through this selenium script.
      exclude: ["Web/browser.py"]),
    .testTarget(
      name: "ChatshTests",
      dependencies: [
        "ChatClient", "LineProtocol", "chatsh", "chatbroker", "Posix", "TestSupport",
      ]),
  ]
)
