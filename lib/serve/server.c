// SPDX-License-Identifier: MIT
/*
 * pmon serve's server (lib/serve/serve.h): the listen address, the TLS and
 * auth files, the collector the options describe (libpmon's
 * pmon_collector), then libmicrohttpd (lib/serve/http.c) until a signal.
 * Lives in pmon-serve.so, above the core library: pmon itself never maps
 * libmicrohttpd. It never prints: failures return -errno with
 * pmon_errdetail() set and the step they happened in, and what an operator
 * should see while it runs goes to the caller's callbacks.
 *
 * Threads: libmicrohttpd's and the profiles' (http.c), the collector's,
 * and the calling thread, which waits for SIGTERM/SIGINT/SIGHUP with
 * sigwait(): those signals are blocked in the calling thread before any
 * other is created, so every thread inherits the blocked set.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "serve/http.h"
#include "serve/serve.h"
#include <pmon/pmon.h>

#define MAX_FILE (1 << 20) /* certificates, keys, the auth file */

/* What the set-up read: the address, the PEM files. */
struct serve_conf {
	struct sockaddr_storage ss;
	bool v6, loopback;
	char *cert_pem, *key_pem;
};

/* ---- files -------------------------------------------------------------- */

/* The whole of @path (at most MAX_FILE bytes), NUL-terminated, in *@out.
 * @secret: refuse a file others may read. Return: 0 or -errno with the
 * detail naming @what and @path. */
static int slurp(const char *path, const char *what, bool secret, char **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	int err = 0, e;

	*out = NULL;
	if (fd < 0) {
		e = errno;
		return pmon__err(-e, "cannot open %s '%s': %s", what, path, strerror(e));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE) {
		err = pmon__err(-EINVAL, "%s '%s' is not a regular file of at most 1 MiB", what,
				path);
		goto out;
	}
	/* As ssh for authorized_keys: a secret belongs to the user pmon runs
	 * as, or to root; another user's file could be rewritten by them. */
	if (secret && st.st_uid != geteuid() && st.st_uid != 0) {
		err = pmon__err(-EPERM,
				"%s '%s' belongs to another user (uid %u): it must be this user's "
				"(uid %u) or root's",
				what, path, (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	if (secret && (st.st_mode & 077)) {
		err = pmon__err(-EPERM, "%s '%s' may be read by others (mode %04o): chmod 600 it",
				what, path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = pmon__err(-ENOMEM, "out of memory");
		goto out;
	}
	ssize_t n = read(fd, buf, (size_t)st.st_size);
	if (n < 0) {
		e = errno;
		err = pmon__err(-e, "cannot read %s '%s': %s", what, path, strerror(e));
		free(buf);
		goto out;
	}
	buf[n] = '\0';
	*out = buf;
out:
	close(fd);
	return err;
}

/* One "user:password" line, @line (cut at its colon), added to @s. */
static int add_user(struct serve_server *s, char *line, char *colon)
{
	struct serve_user *nu = realloc(s->users, (s->nusers + 1) * sizeof(*nu));

	if (!nu)
		return pmon__err(-ENOMEM, "out of memory");
	s->users = nu;
	*colon = '\0';
	nu[s->nusers].name = strdup(line);
	nu[s->nusers].password = strdup(colon + 1);
	s->nusers++;
	if (!nu[s->nusers - 1].name || !nu[s->nusers - 1].password)
		return pmon__err(-ENOMEM, "out of memory");
	return 0;
}

/* "user:password" lines ('#' comments, blank lines skipped). */
static int load_users(struct serve_server *s, const char *path)
{
	char *text, *save = NULL;
	unsigned lineno = 0;
	int err = slurp(path, "auth file", true, &text);

	if (err)
		return err;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (!*line || *line == '#')
			continue;
		char *colon = strchr(line, ':');
		if (!colon || colon == line || !colon[1]) {
			err = pmon__err(-EINVAL, "auth file '%s' line %u: expected 'user:password'",
					path, lineno);
			break;
		}
		if ((err = add_user(s, line, colon)))
			break;
	}
	free(text);
	if (!err && !s->nusers)
		err = pmon__err(-EINVAL, "auth file '%s' names no user", path);
	return err;
}

/* The certificate and key, read (both or neither). */
static int load_tls(const char *cert, const char *key, struct serve_conf *c)
{
	int err;

	if (!cert && !key)
		return 0;
	if (!cert || !key)
		return pmon__err(-EINVAL, "a TLS certificate and key go together");
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		return pmon__err(-EOPNOTSUPP, "this libmicrohttpd was built without TLS");
	if ((err = slurp(cert, "certificate", false, &c->cert_pem)))
		return err;
	return slurp(key, "key", true, &c->key_pem);
}

/* ---- the listen address -------------------------------------------------- */

/* "127.0.0.1:9464", "[::1]:9464", "localhost:9464". */
static bool parse_listen(const char *s, struct sockaddr_storage *ss, bool *v6, bool *loopback)
{
	char host[128];
	const char *colon;
	unsigned long port;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host))
			return false;
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return false;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535 || colon[1] == '-' || colon[1] == '+')
		return false;
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*v6 = false;
		*loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
		return true;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*v6 = true;
		*loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
		return true;
	}
	return false;
}

/* The address, the TLS files and the auth file, in that order; a warning
 * for an address beyond this host without authentication. */
static int configure(const struct pmon_serve_opts *o, struct serve_server *s, struct serve_conf *c,
		     enum pmon_serve_step *at)
{
	int err;

	*at = PMON_SERVE_STEP_LISTEN;
	if (!o->listen || !parse_listen(o->listen, &c->ss, &c->v6, &c->loopback))
		return pmon__err(-EINVAL,
				 "'%s': expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464",
				 o->listen ? o->listen : "");
	*at = PMON_SERVE_STEP_TLS;
	if ((err = load_tls(o->tls_cert, o->tls_key, c)))
		return err;
	*at = PMON_SERVE_STEP_AUTH;
	if (o->auth_file && (err = load_users(s, o->auth_file)))
		return err;
	if (!c->loopback && !o->auth_file && o->warn)
		o->warn(o->ctx, PMON_SERVE_WARN_OPEN, o->listen);
	return 0;
}

/* ---- the collector ------------------------------------------------------- */

/* @err with the detail so far behind @what (the detail is one buffer: copy
 * it before formatting into it). */
static int err_about(int err, const char *what)
{
	char why[512];

	pmon__strlcpy(why, pmon_errdetail(), sizeof(why));
	return pmon__err(err, "%s: %s", what, why);
}

/* The library's collector for what the options say. */
static int collector_new(const struct pmon_serve_opts *o, struct pmon_collector **out,
			 enum pmon_serve_step *at)
{
	struct pmon_collector_opts co = { .sz = sizeof(co),
					  .events = o->events,
					  .interval_ms = o->interval_ms,
					  .rdt = o->rdt,
					  .resctrl_root = o->resctrl_root };
	struct pmon_collector *c;
	const char *why;
	char what[PATH_MAX + 32];
	int err = 0;

	*at = PMON_SERVE_STEP_EVENTS;
	*out = NULL;
	if (!(c = pmon_collector__new(&co)))
		return -errno;
	if ((why = pmon_collector__rdt_unavailable(c)) && o->warn)
		o->warn(o->ctx, PMON_SERVE_WARN_NO_RDT, why);
	*at = PMON_SERVE_STEP_SYSTEM_WIDE;
	if (o->system_wide && (err = pmon_collector__add_system_wide(c))) {
		err = err_about(err, "cannot count system-wide");
		goto fail;
	}
	*at = PMON_SERVE_STEP_CGROUP;
	for (size_t i = 0; i < o->ncgroups; i++) {
		if ((err = pmon_collector__add_cgroup(c, o->cgroups[i]))) {
			snprintf(what, sizeof(what), "cannot count cgroup '%s'", o->cgroups[i]);
			err = err_about(err, what);
			goto fail;
		}
	}
	*at = PMON_SERVE_STEP_CGROUP_ROOT;
	if (o->cgroup_root && (err = pmon_collector__watch_root(c, o->cgroup_root)))
		goto fail;
	*out = c;
	return 0;
fail:
	pmon_collector__free(c);
	return err;
}

/* ---- running ------------------------------------------------------------- */

/* Say where it listens, then serve until SIGTERM, SIGINT or SIGHUP (blocked
 * in every thread: taken here with sigwait()) and answer the profiles in
 * progress. */
static void serve_until_signal(const struct pmon_serve_opts *o, struct serve_server *s,
			       struct MHD_Daemon *d, const struct serve_conf *c)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (c->v6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&c->ss)->sin6_addr, host,
			  sizeof(host));
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)&c->ss)->sin_addr, host,
			  sizeof(host));
	struct pmon_serve_listening l = { .tls = c->cert_pem != NULL,
					  .v6 = c->v6,
					  .host = host,
					  .port = serve_http_port(d),
					  .nevents = pmon_collector__nevents(s->col),
					  .ncgroups = pmon_collector__ncgroups(s->col) };
	if (o->listening)
		o->listening(o->ctx, &l);

	int sig = 0;
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	/* Woken each second to shut the connections whose request head is
	 * late (serve_http_sweep()). */
	const struct timespec second = { .tv_sec = 1 };
	while ((sig = sigtimedwait(&stop, NULL, &second)) < 0)
		serve_http_sweep(s);
	atomic_store(&s->stopping, true); /* a profile in progress ends */
	if (o->stopping)
		o->stopping(o->ctx, sig);
	serve_http_wait_profiles(s);
}

/* perf_event descriptors this process still has (0 after a clean stop):
 * the entries of /proc/self/fd, not every possible number. */
static unsigned perf_fds_left(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char link[300], target[64];
	unsigned n = 0;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		ssize_t k = readlink(link, target, sizeof(target) - 1);
		if (k < 0)
			continue;
		target[k] = '\0';
		n += !strcmp(target, "anon_inode:[perf_event]");
	}
	if (d)
		closedir(d);
	return n;
}

/* The collector started and libmicrohttpd listening, then serve. */
static int serve(const struct pmon_serve_opts *o, struct serve_server *s, struct serve_conf *c)
{
	struct MHD_Daemon *d;
	int err;

	if ((err = pmon_collector__start(s->col)))
		return pmon__err(err, "cannot start the collector thread");
	errno = 0;
	d = serve_http_start(s, &c->ss, c->v6, c->cert_pem, c->key_pem);
	if (!d) {
		int e = errno;
		return pmon__err(e ? -e : -EINVAL, "cannot listen on '%s': %s", o->listen,
				 e ? strerror(e) : "libmicrohttpd refused the options");
	}
	serve_until_signal(o, s, d, c);
	MHD_stop_daemon(d);
	return 0;
}

int serve_agent__run(const struct pmon_serve_opts *o, enum pmon_serve_step *step)
{
	struct serve_server s = { .lock = PTHREAD_MUTEX_INITIALIZER,
				  .answered = PTHREAD_COND_INITIALIZER,
				  .conns_lock = PTHREAD_MUTEX_INITIALIZER };
	struct serve_conf c = { .cert_pem = NULL };
	enum pmon_serve_step at = PMON_SERVE_STEP_LISTEN;
	sigset_t sigs, old;
	int err;

	if (!o || o->sz < sizeof(*o)) {
		err = pmon__err(-EINVAL, "pmon serve's options: a struct of %zu bytes expected",
				sizeof(*o));
		goto out;
	}
	s.max_profile_s = o->max_profile_s;
	s.timeout_s = o->timeout_s ? o->timeout_s : 10;
	s.max_conns = o->max_conns ? o->max_conns : 128;
	s.max_client_conns = o->max_client_conns ? o->max_client_conns : 64;
	if ((err = configure(o, &s, &c, &at)))
		goto out;

	/* Before any thread exists: every thread inherits the blocked set, and
	 * this thread takes the signals with sigwait(). */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	err = collector_new(o, &s.col, &at);
	if (!err) {
		at = PMON_SERVE_STEP_RUN;
		err = serve(o, &s, &c);
	}
	pmon_collector__free(s.col);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err) {
		/* Every counter must be closed by now: say so if not. */
		unsigned left = perf_fds_left();
		if (left)
			err = pmon__err(-EBUSY,
					"%u perf_event descriptors still open after stopping",
					left);
	}
out:
	for (size_t i = 0; i < s.nusers; i++) {
		free(s.users[i].name);
		free(s.users[i].password);
	}
	free(s.users);
	free(c.cert_pem);
	free(c.key_pem);
	if (step)
		*step = at;
	return err;
}
