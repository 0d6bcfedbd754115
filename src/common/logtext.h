/*
 * logtext.h - a value as a log line may hold it.  The service's log is one
 * line of key=value fields per event (serve/log.c), read by people and by
 * grep; much of what it records comes from users (a URL path, a trial's
 * output line, a user's name), and a value holding a newline, an escape
 * sequence for the terminal, a quote or ` key=value` of its own would forge
 * or hide fields.  Quoted values are written through rl_log_text.
 */
#ifndef RELISH_LOGTEXT_H
#define RELISH_LOGTEXT_H

#include <stddef.h>

/* in as the inside of a double-quoted field, into out (n bytes, at least
 * 1): printable ASCII but '"' and '\\' as is, those two backslashed, every
 * other byte (control bytes, DEL, bytes of UTF-8) as \xHH; cut at n - 1
 * bytes, never inside an escape.  Returns out. */
char *rl_log_text(const char *in, char *out, size_t n);

/* in as a whole field value: as is when it holds only printable ASCII
 * other than space, '"' and '\\' (a path, a name), else double-quoted
 * through rl_log_text.  Into out (n bytes); returns out. */
char *rl_log_value(const char *in, char *out, size_t n);

/* in as a terminal may show it (what a trial printed reaches `relish
 * status` and `submit --follow` of its owner, root and, under read: all,
 * everyone): control bytes (C0 but newline and tab, DEL, and the C1
 * controls as UTF-8 encodes them, U+0080 to U+009F) as \xHH, so that no
 * escape sequence sets a title, clears a screen or moves the cursor;
 * everything else, UTF-8 included, as is.  Into out (n bytes, at least
 * 1), cut at n - 1 bytes, never inside an escape.  Returns out. */
char *rl_term_text(const char *in, char *out, size_t n);

#endif
