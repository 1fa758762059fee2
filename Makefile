# chatbroker: build, test, install.
#
#   make                      release build (swift build -c release)
#   make install              as root: binaries, man pages, systemd units,
#                             shell completions under $(PREFIX)
#   make install DESTDIR=/tmp/pkg PREFIX=/usr    staged install for a package
#   make uninstall            removes what make install installed
#   make test                 the test suites (debug build)
#   make lint                 swift format lint and mandoc -Tlint
#
# Build as yourself, install as root: "make install" does not build, so that
# no root-owned files end up in the build directory.
#
# "make" is "swift build -c release --static-swift-stdlib": a plain "swift
# build -c release" is another configuration to SwiftPM, which "make" then
# builds again from scratch, so build with make from the start. The static
# link prints "the use of `mktemp' is dangerous": glibc's link-time warning
# for a call in the toolchain's static Foundation (FoundationEssentials,
# Data+Writing.swift.o, nm shows it), not in this tree's code; it is
# harmless, and only linking Foundation dynamically (SWIFT_BUILD_FLAGS=)
# avoids it.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# /usr/local/lib/systemd/system and /usr/lib/systemd/system are both on
# systemd's unit search path.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPLETIONDIR ?= $(PREFIX)/share/zsh/site-functions

SWIFT ?= swift
CONFIGURATION ?= release
# The Swift runtime and Foundation linked in, so the installed binaries do not
# depend on where the toolchain lives. "make SWIFT_BUILD_FLAGS=" links them
# dynamically instead.
SWIFT_BUILD_FLAGS ?= --static-swift-stdlib
# Set to build somewhere else than .build (swift build --scratch-path).
SCRATCH_PATH ?=
SWIFT_SCRATCH = $(if $(SCRATCH_PATH),--scratch-path $(SCRATCH_PATH))
SWIFT_BUILD = $(SWIFT) build -c $(CONFIGURATION) $(SWIFT_SCRATCH) $(SWIFT_BUILD_FLAGS)
TEST_FLAGS ?=
# Where make install takes the binaries from; asked of swift build when unset.
BIN_PATH ?=

INSTALL ?= install
# make install strips the binaries (a quarter of their size: README,
# "Install"); "make install INSTALL_STRIP=" keeps their symbols, for a
# debugger.
INSTALL_STRIP ?= -s
BINARIES = chatbroker chatsh
UNITS = chatbroker.socket chatbroker-irc.socket chatbroker-web.socket chatbroker.service
MANPAGES = $(wildcard man/*.1 man/*.7 man/*.8)

.PHONY: all build install uninstall test lint clean

all: build

build:
	$(SWIFT_BUILD) --product chatbroker
	$(SWIFT_BUILD) --product chatsh

install:
	@bin="$(BIN_PATH)"; \
	if [ -z "$$bin" ]; then bin=$$($(SWIFT_BUILD) --show-bin-path) || exit 1; fi; \
	for name in $(BINARIES); do \
	  if [ ! -x "$$bin/$$name" ]; then \
	    echo "make install: $$bin/$$name is missing; run make first" >&2; exit 1; \
	  fi; \
	done; \
	$(INSTALL) -d -m 755 "$(DESTDIR)$(BINDIR)" && \
	for name in $(BINARIES); do \
	  $(INSTALL) -m 755 $(INSTALL_STRIP) "$$bin/$$name" "$(DESTDIR)$(BINDIR)/$$name" || exit 1; \
	done
	@for page in $(MANPAGES); do \
	  section=$${page##*.}; \
	  $(INSTALL) -d -m 755 "$(DESTDIR)$(MANDIR)/man$$section" && \
	  $(INSTALL) -m 644 "$$page" "$(DESTDIR)$(MANDIR)/man$$section/" || exit 1; \
	done
	$(INSTALL) -d -m 755 "$(DESTDIR)$(SYSTEMDUNITDIR)"
	@for unit in $(UNITS); do \
	  sed 's,/usr/local/bin/chatbroker,$(BINDIR)/chatbroker,g' "systemd/$$unit" \
	    > "$(DESTDIR)$(SYSTEMDUNITDIR)/$$unit.tmp" && \
	  chmod 644 "$(DESTDIR)$(SYSTEMDUNITDIR)/$$unit.tmp" && \
	  mv "$(DESTDIR)$(SYSTEMDUNITDIR)/$$unit.tmp" "$(DESTDIR)$(SYSTEMDUNITDIR)/$$unit" || exit 1; \
	done
	@if [ -f completions/chatsh.bash ]; then \
	  $(INSTALL) -d -m 755 "$(DESTDIR)$(BASHCOMPLETIONDIR)" && \
	  $(INSTALL) -m 644 completions/chatsh.bash "$(DESTDIR)$(BASHCOMPLETIONDIR)/chatsh"; \
	fi
	@if [ -f completions/_chatsh ]; then \
	  $(INSTALL) -d -m 755 "$(DESTDIR)$(ZSHCOMPLETIONDIR)" && \
	  $(INSTALL) -m 644 completions/_chatsh "$(DESTDIR)$(ZSHCOMPLETIONDIR)/_chatsh"; \
	fi
	@echo "installed under $(DESTDIR)$(PREFIX)"
	@# A staged install (DESTDIR, for a package) enables nothing on this host.
	@if [ -z "$(DESTDIR)" ]; then \
	  echo "to start the broker on the first connection (chatbroker.socket;"; \
	  echo "chatbroker-irc.socket for IRC clients, see chatbroker(8)):"; \
	  echo "  systemctl daemon-reload && systemctl enable --now chatbroker.socket chatbroker-irc.socket"; \
	  echo "(chatbroker-web.socket, the browser door, is off until enabled: see THE WEB DOOR in chatbroker(8))"; \
	fi

uninstall:
	rm -f $(foreach name,$(BINARIES),"$(DESTDIR)$(BINDIR)/$(name)")
	rm -f $(foreach page,$(MANPAGES),"$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(page)))/$(notdir $(page))")
	rm -f $(foreach unit,$(UNITS),"$(DESTDIR)$(SYSTEMDUNITDIR)/$(unit)")
	rm -f "$(DESTDIR)$(BASHCOMPLETIONDIR)/chatsh" "$(DESTDIR)$(ZSHCOMPLETIONDIR)/_chatsh"

test:
	$(SWIFT) test $(SWIFT_SCRATCH) $(TEST_FLAGS)

lint:
	$(SWIFT) format lint -r Sources Tests
	mandoc -Tlint -Wwarning man/*.[0-9]

clean:
	$(SWIFT) package $(SWIFT_SCRATCH) clean
