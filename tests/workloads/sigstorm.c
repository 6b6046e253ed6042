// SPDX-License-Identifier: MIT
/*
 * Trace hooks called from a signal handler (issue #31.8): a timer signal
 * every ~50 us whose handler calls the mark hook (and every 4th time a
 * 64-bit counter) while the main thread emits marks of its own and interns
 * new channels, over ROUNDS traces (each one re-attaches the thread's
 * buffer: in odd rounds the handler's hook is the thread's first, in even
 * ones the main loop's, which a signal may interrupt). The main loop spends
 * much of its time inside hooks, so many signals land in one.
 *
 * Every hook called must come out as a record or as a drop: after each
 * trace is stopped it is read back and records + dropped compared with the
 * hooks called. A watchdog thread ends the run (exit 3) when the main loop
 * makes no progress for 10 s: a deadlocked hook fails instead of hanging.
 *
 * usage: wl-sigstorm PREFIX [ROUNDS]   (traces PREFIX.N, removed after)
 * exit: 0 exact accounting, 1 a mismatch, 2 set-up failed, 3 hung.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <pmon/error.h>
#include <pmon/trace.h>

#define MAX_SPIN 200000000L

static volatile sig_atomic_t sig_hooks; /* hooks the handler called, this round */
static unsigned long progress;
static volatile unsigned long sink; /* main loop iterations (atomic) */

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	if (sig_hooks % 4 == 3)
		PMON_TRACE_COUNTER("sig-value", (int64_t)1 << 40 | sig_hooks);
	else
		PMON_TRACE_MARK("sig");
	sig_hooks = sig_hooks + 1;
	errno = saved;
}

static void *watchdog(void *arg)
{
	unsigned long last = (unsigned long)-1;
	int still = 0;
	(void)arg;
	for (;;) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		unsigned long now = __atomic_load_n(&progress, __ATOMIC_RELAXED);
		still = now == last ? still + 1 : 0;
		last = now;
		if (still >= 200) { /* 10 s without one iteration */
			fprintf(stderr, "wl-sigstorm: hung (no progress in 10 s)\n");
			_exit(3);
		}
	}
	return NULL;
}

static void set_timer(long us)
{
	struct itimerval it = { { 0, us }, { 0, us } };
	setitimer(ITIMER_REAL, &it, NULL);
}

/* Read trace @path back: records and drops. */
static int read_back(const char *path, uint64_t *records, uint64_t *dropped)
{
	struct pmon_trace_reader *r = pmon_trace_reader__open(path);
	if (!r) {
		fprintf(stderr, "wl-sigstorm: cannot read %s: %s\n", path, pmon_errdetail());
		return -1;
	}
	const struct pmon_trace_info *info = pmon_trace_reader__info(r);
	*records = pmon_trace_reader__nevents(r);
	*dropped = info->dropped;
	int complete = info->complete;
	pmon_trace_reader__free(r);
	return complete ? 0 : -1;
}

/* One trace: returns 0 when every hook is a record or a drop. */
static int round_run(const char *prefix, int round, sigset_t *alrm)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s.%d", prefix, round);
	struct pmon_trace_opts o = { .sz = sizeof(o), .path = path, .flush_ms = 1 };
	/* The writer thread starts with the signal blocked: the handler runs
	 * on the main thread only. */
	pthread_sigmask(SIG_BLOCK, alrm, NULL);
	if (pmon_trace_start(&o)) {
		fprintf(stderr, "wl-sigstorm: %s\n", pmon_errdetail());
		return 2;
	}
	sig_hooks = 0;
	set_timer(50);
	pthread_sigmask(SIG_UNBLOCK, alrm, NULL);
	/* Odd rounds: the handler's hook attaches this thread's buffer. */
	for (long spin = 0; round % 2 && sig_hooks == 0 && spin < MAX_SPIN; spin++)
		__atomic_add_fetch(&progress, 1, __ATOMIC_RELAXED);
	uint64_t main_hooks = 0;
	uint32_t ch = 0;
	/* Until the storm has hit this round often (a state, not a time);
	 * bounded, should the timer never fire. */
	for (uint64_t i = 0; (sig_hooks < 200 || i < 20000) && i < MAX_SPIN; i++) {
		if (i % 2000 == 0) { /* a new channel, interned under the storm */
			char name[32];
			snprintf(name, sizeof(name), "main-%d-%llu", round, (unsigned long long)i);
			ch = pmon_trace_channel(name);
		}
		if (i % 2)
			PMON_TRACE_MARK("main");
		else
			pmon_trace_mark(ch);
		main_hooks++;
		for (unsigned k = 0; k < 300; k++) /* a little work between hooks */
			sink += k;
		__atomic_add_fetch(&progress, 1, __ATOMIC_RELAXED);
	}
	pthread_sigmask(SIG_BLOCK, alrm, NULL);
	set_timer(0);
	uint64_t hooks = main_hooks + (uint64_t)sig_hooks;
	int err = pmon_trace_stop();
	uint64_t records = 0, dropped = 0;
	if (!err && read_back(path, &records, &dropped))
		err = -1;
	unlink(path);
	pthread_sigmask(SIG_UNBLOCK, alrm, NULL);
	if (err) {
		fprintf(stderr, "wl-sigstorm: round %d: trace not complete\n", round);
		return 2;
	}
	if (sig_hooks < 200) {
		fprintf(stderr, "wl-sigstorm: round %d: the timer signal came %d times\n", round,
			(int)sig_hooks);
		return 2;
	}
	printf("round %d: hooks %llu (handler %llu) records %llu dropped %llu\n", round,
	       (unsigned long long)hooks, (unsigned long long)sig_hooks,
	       (unsigned long long)records, (unsigned long long)dropped);
	return records + dropped == hooks ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: wl-sigstorm PREFIX [ROUNDS]\n");
		return 2;
	}
	char *end;
	long rounds = argc > 2 ? strtol(argv[2], &end, 10) : 12;
	if (argc > 2 && (*end || rounds < 1 || rounds > 1000)) {
		fprintf(stderr, "wl-sigstorm: bad ROUNDS '%s'\n", argv[2]);
		return 2;
	}
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);

	pthread_t wd;
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	if (pthread_create(&wd, NULL, watchdog, NULL))
		return 2;
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	int bad = 0;
	for (int r = 0; r < (int)rounds; r++) {
		int rc = round_run(argv[1], r, &alrm);
		if (rc == 2)
			return 2;
		bad += rc;
	}
	if (bad)
		fprintf(stderr, "wl-sigstorm: %d of %ld rounds lost hooks unseen\n", bad, rounds);
	return bad ? 1 : 0;
}
