/* log.h -- messages from the binaries to stderr ("dtrun: ..."); libraries never print. */
#ifndef DT_LOG_H
#define DT_LOG_H

/* 0 = normal, <0 quiet (-q), >0 verbose (-v, -vv). */
extern int	 log_level;

/* When set, called before each message is written (a status line clears itself). */
extern void	(*log_hook)(void);
/*
 * When set, called before each message is written, before log_hook:
 * forwarded lines held back (--collapse) go out first, so that no message
 * overtakes what the ranks said before it.
 */
extern void	(*log_flush)(void);

/* Sets the "progname: " every message starts with. */
void		 log_init(const char *progname);
const char	*log_progname(void);

/*
 * Copies src into dst (len bytes, always NUL-terminated) with every byte a
 * terminal could act on escaped: newline, CR and tab as \n, \r, \t; other
 * control characters, DEL, C1 controls and bytes that are not valid UTF-8
 * as \xHH. Printable ASCII and valid UTF-8 stay as they are ('\\' too, so
 * escaping twice changes nothing). An escape or character that does not
 * fit is left out whole. Every log_* message goes through it; use it for
 * peer-supplied text printed any other way. Returns dst.
 */
char	*log_escape(char *dst, size_t len, const char *src);
/*
 * The same for n bytes of src, which may hold NULs. Sets *used (if not
 * NULL) to the bytes of src consumed, which is less than n when dst filled
 * up; returns the length written (dst is NUL-terminated).
 */
size_t	 log_escape_mem(char *dst, size_t len, const char *src, size_t n,
	    size_t *used);

void	 log_error(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
/* Something the user should know that is not wrong; hidden by -q. */
void	 log_notice(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
/*
 * Logs a peer's msg as errors (an agent's ERROR, with a failed --setup's
 * stderr): a line per newline that lead (the peer's name and ": ") follows,
 * so every line we print names the peer; any other newline stays inside
 * its line, escaped, so the peer cannot start a line that poses as ours.
 * lead NULL or "": one line.
 */
void	 log_error_lines(const char *msg, const char *lead);

#endif
