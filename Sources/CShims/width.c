// wcwidth(3) needs _XOPEN_SOURCE, which Swift's Glibc module does not define.
#define _XOPEN_SOURCE 700
#include <wchar.h>
#include "CShims.h"

int chat_wcwidth(unsigned int character) {
  return wcwidth((wchar_t)character);
}
