/*
 * Run f in a forked child, which must die of a fatal error whose log line
 * ends with the text given (the lying-peer tests).
 */
#ifndef ASSERT_FATAL_H
#define ASSERT_FATAL_H

void	assert_fatal(void (*f)(void), const char *fatal);

#endif /* ASSERT_FATAL_H */
