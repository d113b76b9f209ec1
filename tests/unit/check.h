/*
 * check.h -- the whole unit-test "framework": CHECK() prints one line per
 * check ("ok" or "FAIL", with the source line) and counts it; check_summary()
 * prints the closing "N passed, M failed" line and returns the exit status.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

static unsigned check_passed, check_failed;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			check_passed++;                                         \
			printf("ok   ");                                        \
		} else {                                                        \
			check_failed++;                                         \
			printf("FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond); \
		}                                                               \
		printf(__VA_ARGS__);                                            \
		putchar('\n');                                                  \
		fflush(stdout); /* keep the lines if a later check crashes */   \
	} while (0)

static inline int check_summary(void)
{
	printf("%u passed, %u failed\n", check_passed, check_failed);
	fflush(stdout);
	return check_failed ? 1 : 0;
}

#endif
