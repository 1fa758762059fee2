// Nettle (Debian's nettle-dev): SHA-1 and base64 for the WebSocket
// handshake (RFC 6455), SHA-256 for the web door's tokens, which the
// journal keeps only hashed (chatbroker(8), JOURNAL FORMAT), and
// HMAC-SHA256 for the federation's de-duplication ids.
#include <nettle/base64.h>
#include <nettle/hmac.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
