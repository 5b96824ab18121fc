/*
 * test.h -- a whole unit-test harness in one header. A test file writes
 *
 *	TEST(frame_roundtrip) { CHECK(x == 1); CHECK_STR(s, "a"); }
 *
 * and is picked up by the Makefile's wildcard; TEST registers itself with
 * a constructor, so no list of tests is kept by hand.
 */
#ifndef DT_TEST_H
#define DT_TEST_H

#include <stdio.h>
#include <string.h>

typedef void	(*test_fn)(void);

void	t_register(const char *name, const char *file, test_fn fn);
void	t_fail(const char *file, int line, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Non-NULL when running under "unit-tests -d DIR": where tests find data files. */
extern const char *t_datadir;

#define TEST(name)							\
	static void test_##name(void);					\
	__attribute__((constructor)) static void reg_##name(void)	\
	{ t_register(#name, __FILE__, test_##name); }			\
	static void test_##name(void)

#define CHECK(c) do {							\
	if (!(c)) t_fail(__FILE__, __LINE__, "CHECK(%s)", #c);		\
} while (0)

#define CHECK_INT(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b) t_fail(__FILE__, __LINE__, "%s == %lld, want %lld", #a, _a, _b); \
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *_a = (a), *_b = (b);				\
	if (_a == NULL || _b == NULL || strcmp(_a, _b) != 0)		\
		t_fail(__FILE__, __LINE__, "%s == \"%s\", want \"%s\"",	\
		    #a, _a ? _a : "(null)", _b ? _b : "(null)");	\
} while (0)

#endif
