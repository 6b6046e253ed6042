/* SPDX-License-Identifier: MIT */
/*
 * Between lib/serve/server.c (set-up, signals, the collector) and
 * lib/serve/http.c (libmicrohttpd: routing, pages, profiles): the state of
 * one running server.
 */
#ifndef PMON_SERVE_HTTP_H
#define PMON_SERVE_HTTP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct MHD_Daemon;
struct pmon_collector;
struct serve_conn;

struct serve_user {
	char *name, *password;
};

struct serve_server {
	struct pmon_collector *col;
	struct serve_user *users;
	size_t nusers;
	unsigned max_profile_s;
	atomic_bool profiling, stopping;
	/* Profile requests not yet answered (libmicrohttpd's completion callback
	 * counts them down): a stop waits for them, so that a profile cut short
	 * is answered 503 before the connections are shut. */
	pthread_mutex_t lock;
	pthread_cond_t answered; /* also: a profile thread ended */
	unsigned profiles_open;
	unsigned profile_threads; /* running: a stop waits for them to end */
	/* Against slow clients (docs/serve.md, "Slow clients"): the limits, and
	 * every open connection (lib/serve/http.c's struct serve_conn, added and
	 * removed by libmicrohttpd's thread) so that serve_http_sweep() can shut
	 * one whose request head has not come in time. */
	unsigned timeout_s, max_conns, max_client_conns;
	pthread_mutex_t conns_lock;
	struct serve_conn *conns;
	unsigned nconns;
};

/* libmicrohttpd serving @s on @ss (HTTPS with @cert_pem and @key_pem when
 * @cert_pem is not NULL). Return: the daemon, or NULL with errno (0 when
 * libmicrohttpd refused the options). */
struct MHD_Daemon *serve_http_start(struct serve_server *s, struct sockaddr_storage *ss, bool v6,
				    const char *cert_pem, const char *key_pem);
/* The port @d is bound to (0 when libmicrohttpd cannot say). */
unsigned serve_http_port(struct MHD_Daemon *d);
/* After s->stopping is set: wait for the profiles in progress to end and
 * be answered (10 s at most), before the daemon is stopped. */
void serve_http_wait_profiles(struct serve_server *s);
/* Shut the connections whose request head is late: s->timeout_s after the
 * connection (or its previous answer), 1 s when fewer than an eighth of
 * s->max_conns are free (a reserve for new clients). Called about once a
 * second, from any thread. Return: how many were shut. */
unsigned serve_http_sweep(struct serve_server *s);

#endif
