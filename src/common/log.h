/* log.h -- messages from the binaries to stderr ("dtrun: ..."); libraries never print. */
#ifndef DT_LOG_H
#define DT_LOG_H

/* 0 = normal, <0 quiet (-q), >0 verbose (-v, -vv). */
extern int	 log_level;

/* When set, called before each message is written (a status line clears itself). */
extern void	(*log_hook)(void);

/* Sets the "progname: " every message starts with. */
void		 log_init(const char *progname);
const char	*log_progname(void);

void	 log_error(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
/* Something the user should know that is not wrong; hidden by -q. */
void	 log_notice(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif
