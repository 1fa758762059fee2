// libical's RFC 5545 recurrence rules (icalrecur_iterator) as the few calls
// LineProtocol's CalendarRule needs. Times are floating (no zone): the rule
// is expanded in local wall time, and Swift maps each local time to an
// instant in the series' zone, so a change to or from daylight saving time
// is handled once, the way every other rule form handles it.
#include <libical/ical.h>
#include <stdlib.h>
#include <string.h>

// What chat_rrule_read found: the frequency (icalrecurrencetype_frequency),
// COUNT (0 when absent) and how many BYSECOND values the rule lists.
struct chat_rrule_facts {
  int frequency;
  int count;
  int bySeconds;
};

// Reads an RRULE value without DTSTART, UNTIL and EXDATE and writes libical's
// canonical spelling of it to `canonical`. Returns 0, or -1 when libical
// cannot read it or the spelling does not fit. Errors are never fatal:
// libical's default is to abort.
static inline int chat_rrule_read(const char *text, char *canonical, size_t size,
                                  struct chat_rrule_facts *facts) {
  icalerror_set_errors_are_fatal(0);
  icalerrno = ICAL_NO_ERROR;
  struct icalrecurrencetype rule = icalrecurrencetype_from_string(text);
  if (rule.freq == ICAL_NO_RECURRENCE || icalerrno != ICAL_NO_ERROR || rule.rscale != NULL) {
    free(rule.rscale);
    icalerrno = ICAL_NO_ERROR;
    return -1;
  }
  facts->frequency = (int)rule.freq;
  facts->count = rule.count;
  facts->bySeconds = 0;
  while (facts->bySeconds < ICAL_BY_SECOND_SIZE &&
         rule.by_second[facts->bySeconds] != ICAL_RECURRENCE_ARRAY_MAX) {
    facts->bySeconds++;
  }
  char *spelled = icalrecurrencetype_as_string_r(&rule);
  if (spelled == NULL) return -1;
  size_t length = strlen(spelled);
  int fits = length < size;
  if (fits) memcpy(canonical, spelled, length + 1);
  icalmemory_free_buffer(spelled);
  return fits ? 0 : -1;
}

static inline struct icaltimetype chat_floating(const int fields[6]) {
  struct icaltimetype time = icaltime_null_time();
  time.year = fields[0];
  time.month = fields[1];
  time.day = fields[2];
  time.hour = fields[3];
  time.minute = fields[4];
  time.second = fields[5];
  return time;
}

// An iterator over the local times of `text` from the local time `start`
// (year, month, day, hour, minute, second), or NULL when libical finds the
// rule has none (BYMONTH=2;BYMONTHDAY=30).
static inline icalrecur_iterator *chat_rrule_iterator(const char *text, const int start[6]) {
  icalerror_set_errors_are_fatal(0);
  icalerrno = ICAL_NO_ERROR;
  struct icalrecurrencetype rule = icalrecurrencetype_from_string(text);
  if (rule.freq == ICAL_NO_RECURRENCE) return NULL;
  icalrecur_iterator *iterator = icalrecur_iterator_new(rule, chat_floating(start));
  icalerrno = ICAL_NO_ERROR;
  return iterator;
}

// Moves the iterator on to the first occurrence at or after `from`; libical
// refuses this for a rule with COUNT (returns 0).
static inline int chat_rrule_skip_to(icalrecur_iterator *iterator, const int from[6]) {
  int moved = icalrecur_iterator_set_start(iterator, chat_floating(from));
  icalerrno = ICAL_NO_ERROR;
  return moved;
}

// The next local time into `fields`; 0 when the rule has no more.
static inline int chat_rrule_next(icalrecur_iterator *iterator, int fields[6]) {
  struct icaltimetype time = icalrecur_iterator_next(iterator);
  icalerrno = ICAL_NO_ERROR;
  if (icaltime_is_null_time(time)) return 0;
  fields[0] = time.year;
  fields[1] = time.month;
  fields[2] = time.day;
  fields[3] = time.hour;
  fields[4] = time.minute;
  fields[5] = time.second;
  return 1;
}
