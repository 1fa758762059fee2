// libwslay (Debian's libwslay-dev, MIT): WebSocket framing for the browser
// door (chatbroker(8), --web-listen). Debian ships no pkg-config file for it.
#include <wslay/wslay.h>
