// SPDX-License-Identifier: MIT
/*
 * Event text -> struct pmon_event_desc (pmon/event.h), in perf's syntax.
 * Generic and software events are tables (the kernel's uapi enums); PMU
 * terms are read from the PMU's sysfs format/ files and aliases from its
 * events/ files (ABI: sysfs-bus-event_source-devices-format/-events);
 * tracepoints from tracefs; CPU-specific names from libpfm4 (event/pfm.c).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event/pfm.h"
#include "internal.h"
#include <pmon/event.h>
#include <pmon/kernel.h>

struct pmon_evlist {
	struct pmon_event_desc *ev;
	size_t n, cap;
	char sysfs[256];
	char tracefs[256];
	bool tracefs_default;
	bool tracefs_mounted; /* by this list: unmounted when done with it */
	int tracefs_errno; /* why tracefs_ready() last said no: ENOENT, EACCES,
			    * EPERM (tracepoints are not open to this user) */
	int paranoid; /* perf_event_paranoid, read where EPERM was decided */
	bool no_pfm;
	char **filter; /* --filter per event, nfilter entries (NULL: none) */
	size_t nfilter;
	char **cgroup; /* -G per event, ncgroup entries (NULL: none) */
	size_t ncgroup;
};

struct name_id {
	const char *name;
	uint64_t id;
};

/* include/uapi/linux/perf_event.h: enum perf_hw_id, perf_sw_ids. */
static const struct name_id hw_events[] = {
	{ "cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES },
};

static const struct name_id sw_events[] = {
	{ "cpu-clock", PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_COUNT_SW_DUMMY },
	{ "bpf-output", PERF_COUNT_SW_BPF_OUTPUT },
	{ "cgroup-switches", 11 /* PERF_COUNT_SW_CGROUP_SWITCHES, Linux 5.13 */ },
};

static const struct name_id caches[] = {
	{ "L1-dcache", PERF_COUNT_HW_CACHE_L1D }, { "L1-icache", PERF_COUNT_HW_CACHE_L1I },
	{ "LLC", PERF_COUNT_HW_CACHE_LL },	  { "dTLB", PERF_COUNT_HW_CACHE_DTLB },
	{ "iTLB", PERF_COUNT_HW_CACHE_ITLB },	  { "branch", PERF_COUNT_HW_CACHE_BPU },
	{ "node", PERF_COUNT_HW_CACHE_NODE },
};

static const struct {
	const char *one, *many;
	uint64_t id;
} cache_ops[] = {
	{ "load", "loads", PERF_COUNT_HW_CACHE_OP_READ },
	{ "store", "stores", PERF_COUNT_HW_CACHE_OP_WRITE },
	{ "prefetch", "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH },
};

#define MODIFIER_CHARS "ukhGHpPID"

const char *pmon_event_source_name(enum pmon_event_source s)
{
	static const char *const names[] = { "hardware", "cache",	"software",   "raw",
					     "pmu",	 "sysfs alias", "tracepoint", "libpfm4" };
	return (unsigned)s < PMON_ARRAY_SIZE(names) ? names[s] : "?";
}

/* ---- list ------------------------------------------------------------ */

struct pmon_evlist *pmon_evlist__new(const struct pmon_event_opts *user)
{
	struct pmon_evlist *l = calloc(1, sizeof(*l));
	struct pmon_event_opts o = { 0 };
	const struct pmon_event_opts *opts = user ? &o : NULL;

	if (!l)
		return NULL;
	if (PMON_OPTS_COPY(&o, user, struct pmon_event_opts, sz)) {
		free(l);
		errno = EINVAL;
		return NULL;
	}
	pmon__strlcpy(l->sysfs, opts && opts->sysfs_root ? opts->sysfs_root : "/sys",
		      sizeof(l->sysfs));
	l->tracefs_default = !(opts && opts->tracefs_root);
	pmon__strlcpy(l->tracefs, l->tracefs_default ? "/sys/kernel/tracing" : opts->tracefs_root,
		      sizeof(l->tracefs));
	l->no_pfm = opts && opts->no_pfm;
	return l;
}

static void tracefs_unmount(struct pmon_evlist *l);

void pmon_evlist__free(struct pmon_evlist *l)
{
	if (!l)
		return;
	tracefs_unmount(l);
	for (size_t i = 0; i < l->nfilter; i++)
		free(l->filter[i]);
	free(l->filter);
	for (size_t i = 0; i < l->ncgroup; i++)
		free(l->cgroup[i]);
	free(l->cgroup);
	free(l->ev);
	free(l);
}

/* (*@v)[@i] = a copy of @s (NULL: none), the array grown to hold it. */
static int set_per_event(char ***v, size_t *n, size_t i, const char *s)
{
	char *copy = NULL;

	if (i >= *n) {
		char **f = realloc(*v, (i + 1) * sizeof(*f));
		if (!f)
			return -ENOMEM;
		memset(f + *n, 0, (i + 1 - *n) * sizeof(*f));
		*v = f;
		*n = i + 1;
	}
	if (s && !(copy = strdup(s)))
		return -ENOMEM;
	free((*v)[i]);
	(*v)[i] = copy;
	return 0;
}

int pmon_evlist__set_cgroup(struct pmon_evlist *l, size_t i, const char *dir)
{
	if (i >= l->n)
		return pmon__err(-EINVAL, "-G: no event %zu to put in cgroup '%s'", i,
				 dir ? dir : "");
	return set_per_event(&l->cgroup, &l->ncgroup, i, dir && *dir ? dir : NULL);
}

const char *pmon_evlist__cgroup(const struct pmon_evlist *l, size_t i)
{
	return l && i < l->ncgroup ? l->cgroup[i] : NULL;
}

int pmon_evlist__set_filter(struct pmon_evlist *l, size_t i, const char *filter)
{
	if (i >= l->n || l->ev[i].attr.type != PERF_TYPE_TRACEPOINT)
		return pmon__err(-EINVAL,
				 "--filter goes with a tracepoint (-e sys:name before it)%s%s%s",
				 i < l->n ? ", not '" : "", i < l->n ? l->ev[i].name : "",
				 i < l->n ? "'" : "");
	if (!filter || !*filter)
		return pmon__err(-EINVAL, "the filter of '%s' is empty", l->ev[i].name);
	return set_per_event(&l->filter, &l->nfilter, i, filter);
}

const char *pmon_evlist__filter(const struct pmon_evlist *l, size_t i)
{
	return l && i < l->nfilter ? l->filter[i] : NULL;
}

size_t pmon_evlist__count(const struct pmon_evlist *l)
{
	return l ? l->n : 0;
}

const struct pmon_event_desc *pmon_evlist__event(const struct pmon_evlist *l, size_t i)
{
	return l && i < l->n ? &l->ev[i] : NULL;
}

struct pmon_evlist *pmon_evlist__slice(const struct pmon_evlist *l, size_t first, size_t n)
{
	struct pmon_evlist *s;

	if (!l || first > l->n || n > l->n - first) {
		errno = EINVAL;
		return NULL;
	}
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	*s = *l;
	s->tracefs_mounted = false; /* the original unmounts it */
	s->n = s->cap = n;
	s->ev = malloc((n ? n : 1) * sizeof(*s->ev));
	if (!s->ev) {
		free(s);
		return NULL;
	}
	memcpy(s->ev, l->ev + first, n * sizeof(*s->ev));
	for (size_t i = 0; i < n; i++)
		s->ev[i].group = (int)i;
	return s;
}

void pmon_evlist__set_user_only(struct pmon_evlist *l, size_t i)
{
	if (i < l->n) {
		l->ev[i].attr.exclude_kernel = 1;
		l->ev[i].attr.exclude_hv = 1;
	}
}

/* ---- helpers --------------------------------------------------------- */

static bool lookup(const struct name_id *t, size_t n, const char *name, uint64_t *id)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(t[i].name, name)) {
			*id = t[i].id;
			return true;
		}
	return false;
}

static bool lookup_cache(const char *name, uint64_t *config)
{
	for (size_t c = 0; c < PMON_ARRAY_SIZE(caches); c++) {
		size_t cl = strlen(caches[c].name);

		if (strncasecmp(name, caches[c].name, cl) || name[cl] != '-')
			continue;
		const char *rest = name + cl + 1;
		for (size_t o = 0; o < PMON_ARRAY_SIZE(cache_ops); o++) {
			uint64_t result;
			size_t ol = strlen(cache_ops[o].one);

			if (!strcasecmp(rest, cache_ops[o].many))
				result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
			else if (!strncasecmp(rest, cache_ops[o].one, ol) &&
				 !strcasecmp(rest + ol, "-misses"))
				result = PERF_COUNT_HW_CACHE_RESULT_MISS;
			else
				continue;
			*config = caches[c].id | cache_ops[o].id << 8 | result << 16;
			return true;
		}
	}
	return false;
}

static int parse_num(const char *s, uint64_t *out)
{
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	return pmon__parse_u64(s, base, out);
}

/* The entries of @dir, sorted, joined by ", " into @buf ("" if none). */
static size_t join_dir(const char *dir, char *buf, size_t len)
{
	struct dirent **list;
	size_t off = 0;
	int n = scandir(dir, &list, NULL, alphasort);

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (list[i]->d_name[0] != '.' && off < len) {
			int k = snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
					 list[i]->d_name);
			if (k > 0)
				off += (size_t)k;
		}
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return off;
}

/* The names of the PMUs here, for messages ("breakpoint, msr, software ..."). */
static void pmu_names(const struct pmon_evlist *l, char *buf, size_t len)
{
	char path[512];

	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices", l->sysfs);
	join_dir(path, buf, len);
}

static bool core_pmu_present(const struct pmon_evlist *l)
{
	return pmon_kernel_has_core_pmu(l->sysfs);
}

/* ---- PMU terms (sysfs format/) ---------------------------------------- */

/* Place @value into @attr through a format spec like "config:0-7,32-35". */
static int apply_format(struct perf_event_attr *attr, const char *spec, uint64_t value,
			const char *ev, const char *term)
{
	char field[16];
	const char *p = strchr(spec, ':');
	uint64_t *dst, left = value;
	unsigned bits = 0;

	if (!p || (size_t)(p - spec) >= sizeof(field))
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "event '%s': format of '%s' is '%s'",
				 ev, term, spec);
	pmon__fmt(field, sizeof(field), "%.*s", (int)(p - spec), spec);
	if (!strcmp(field, "config"))
		dst = (uint64_t *)&attr->config;
	else if (!strcmp(field, "config1"))
		dst = (uint64_t *)&attr->config1;
	else if (!strcmp(field, "config2"))
		dst = (uint64_t *)&attr->config2;
	else
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
				 "event '%s': term '%s' sets unknown field '%s'", ev, term, field);
	for (p++; *p;) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			break;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi < lo || hi > 63)
			break;
		for (unsigned long b = lo; b <= hi; b++, bits++) {
			*dst = (*dst & ~(1ULL << b)) | ((left & 1) << b);
			left >>= 1;
		}
		p = *end == ',' ? end + 1 : end;
	}
	if (left)
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
				 "event '%s': value %#" PRIx64 " does not fit '%s' (%u bits: %s)",
				 ev, value, term, bits, spec);
	return 0;
}

static int apply_terms(const struct pmon_evlist *l, struct pmon_event_desc *d, const char *pmu,
		       const char *terms, const char *ev, int depth);

/* A sysfs alias of @pmu: its terms, and its .unit/.scale files. */
static int apply_alias(const struct pmon_evlist *l, struct pmon_event_desc *d, const char *pmu,
		       const char *alias, const char *ev, int depth)
{
	char path[512], text[512];
	long n;

	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/events/%s", l->sysfs, pmu,
		  alias);
	n = pmon__read_text(path, text, sizeof(text));
	if (n < 0)
		return (int)n;
	if (depth > 2)
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "event '%s': alias loop at '%s'", ev,
				 alias);
	int err = apply_terms(l, d, pmu, text, ev, depth + 1);
	if (err)
		return err;
	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/events/%s.unit", l->sysfs,
		  pmu, alias);
	if (pmon__read_text(path, text, sizeof(text)) > 0)
		pmon__strlcpy(d->unit, text, sizeof(d->unit));
	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/events/%s.scale", l->sysfs,
		  pmu, alias);
	if (pmon__read_text(path, text, sizeof(text)) > 0) {
		char *end;
		double s = pmon__strtod_c(text, &end);
		if (end != text && s > 0)
			d->scale = s;
	}
	return 0;
}

static void format_terms(const struct pmon_evlist *l, const char *pmu, char *buf, size_t len)
{
	char path[512];

	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/format", l->sysfs, pmu);
	if (!join_dir(path, buf, len))
		pmon__strlcpy(buf, "none", len);
}

static int apply_terms(const struct pmon_evlist *l, struct pmon_event_desc *d, const char *pmu,
		       const char *terms, const char *ev, int depth)
{
	char *copy = strdup(terms), *save = NULL, *t;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (t = strtok_r(copy, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), path[512], spec[128];
		const char *key = t, *val = eq ? eq + 1 : NULL;
		uint64_t v = 1;

		while (*key == ' ')
			key++;
		if (eq)
			*eq = '\0';
		if (!*key) {
			err = pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "event '%s': empty term", ev);
			break;
		}
		if (!strcmp(key, "name")) {
			if (!val || !*val)
				err = pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
						"event '%s': name= needs a value", ev);
			else
				pmon__strlcpy(d->name, val, sizeof(d->name));
			continue;
		}
		if (val && (err = parse_num(val, &v))) {
			err = pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "event '%s': '%s=%s': %s", ev,
					key, val,
					err == -ERANGE ? "the value does not fit 64 bits"
						       : "the value is not a number");
			break;
		}
		if (!strcmp(key, "config")) {
			d->attr.config = v;
		} else if (!strcmp(key, "config1")) {
			d->attr.config1 = v;
		} else if (!strcmp(key, "config2")) {
			d->attr.config2 = v;
		} else if (!strcmp(key, "period")) {
			d->attr.sample_period = v;
		} else {
			pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/format/%s",
				  l->sysfs, pmu, key);
			int ar = -ENOENT;
			if (pmon__read_text(path, spec, sizeof(spec)) > 0) {
				err = apply_format(&d->attr, spec, v, ev, key);
			} else if (!val && (ar = apply_alias(l, d, pmu, key, ev, depth)) == 0) {
				d->source = PMON_EV_ALIAS;
			} else if (ar != -ENOENT) {
				err = ar; /* the alias exists but its terms are bad */
			} else {
				char known[256];
				format_terms(l, pmu, known, sizeof(known));
				err = pmon__err(
					-PMON_ERRNO__EVENT_SYNTAX,
					"event '%s': '%s' is neither a format term nor an event "
					"of PMU '%s' (terms: %s)",
					ev, key, pmu, known);
			}
		}
	}
	free(copy);
	return err;
}

static int parse_pmu_event(const struct pmon_evlist *l, struct pmon_event_desc *d, const char *ev)
{
	const char *s1 = strchr(ev, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	char pmu[64], terms[512], path[512];
	long type;

	if (!s2 || s2[1])
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
				 "event '%s': expected 'pmu/term=value,.../'", ev);
	if (s1 == ev || (size_t)(s1 - ev) >= sizeof(pmu))
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
				 "event '%s': missing PMU name before '/'", ev);
	pmon__fmt(pmu, sizeof(pmu), "%.*s", (int)(s1 - ev), ev);
	pmon__fmt(terms, sizeof(terms), "%.*s", (int)(s2 - s1 - 1), s1 + 1);
	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/type", l->sysfs, pmu);
	if (pmon__read_long(path, &type)) {
		char have[256];
		pmu_names(l, have, sizeof(have));
		bool core = !strcmp(pmu, "cpu") || !strncmp(pmu, "cpu_", 4);
		return pmon__err(-PMON_ERRNO__PMU_MISSING,
				 "event '%s': PMU '%s' does not exist here%s (PMUs: %s)", ev, pmu,
				 core ? "; this machine exposes no core PMU" : "", have);
	}
	/* cpu_core/cycles/, cpu_atom/L1-dcache-loads/: a generic event on one
	 * core PMU of a hybrid part, the extended type in config[63:32]
	 * (PERF_PMU_TYPE_SHIFT), as perf's parse_events_add_numeric() does. */
	uint64_t id;
	if ((!strcmp(pmu, "cpu_core") || !strcmp(pmu, "cpu_atom")) &&
	    (lookup(hw_events, PMON_ARRAY_SIZE(hw_events), terms, &id) ||
	     lookup_cache(terms, &id))) {
		d->attr.type = lookup(hw_events, PMON_ARRAY_SIZE(hw_events), terms, &id)
			? PERF_TYPE_HARDWARE
			: PERF_TYPE_HW_CACHE;
		d->attr.config = id | (uint64_t)(uint32_t)type << PMON_PMU_TYPE_SHIFT;
		d->source = d->attr.type == PERF_TYPE_HARDWARE ? PMON_EV_HARDWARE : PMON_EV_CACHE;
		d->needs_core_pmu = true;
		pmon__strlcpy(d->pmu, pmu, sizeof(d->pmu));
		return 0;
	}
	d->attr.type = (uint32_t)type;
	d->source = PMON_EV_PMU;
	pmon__strlcpy(d->pmu, pmu, sizeof(d->pmu));
	d->needs_core_pmu = !strcmp(pmu, "cpu") || !strncmp(pmu, "cpu_", 4);
	if (!terms[0])
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
				 "event '%s': no terms between the slashes", ev);
	return apply_terms(l, d, pmu, terms, ev, 0);
}

/* A bare name that a PMU's events/ directory defines ("tsc", "mem-loads"). */
static int find_alias(const struct pmon_evlist *l, struct pmon_event_desc *d, const char *name)
{
	char path[512];
	struct dirent **list;
	int n, err = -ENOENT;

	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices", l->sysfs);
	n = scandir(path, &list, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *pmu = list[i]->d_name;
		long type;

		if (err == -ENOENT && pmu[0] != '.') {
			pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/events/%s",
				  l->sysfs, pmu, name);
			if (strchr(name, '/') == NULL && access(path, R_OK) == 0) {
				pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/type",
					  l->sysfs, pmu);
				if (!pmon__read_long(path, &type)) {
					d->attr.type = (uint32_t)type;
					pmon__strlcpy(d->pmu, pmu, sizeof(d->pmu));
					d->source = PMON_EV_ALIAS;
					d->needs_core_pmu =
						!strcmp(pmu, "cpu") || !strncmp(pmu, "cpu_", 4);
					err = apply_alias(l, d, pmu, name, name, 0);
				}
			}
		}
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return err;
}

/* ---- tracepoints ----------------------------------------------------- */

static bool tp_name_ok(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

/* Whether the kernel would let this process open a tracepoint at all:
 * perf_allow_tracepoint() (include/linux/perf_event.h) asks for
 * perfmon_capable() -- CAP_PERFMON or CAP_SYS_ADMIN, root has both -- once
 * perf_event_paranoid is above -1. Where it would not, that is the reason,
 * whether tracefs happens to be mounted or not. */
static bool tracepoints_allowed(int *paranoid)
{
	char line[256];
	long p = 2;
	uint64_t caps = 0;
	bool capable = false;

	if (pmon__read_long("/proc/sys/kernel/perf_event_paranoid", &p))
		p = 2; /* the kernel's default when the file cannot be read */
	*paranoid = (int)p;
	if (p <= -1 || geteuid() == 0)
		return true;
	FILE *f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7)) {
			char *v = line + 7;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			if (pmon__parse_u64(v, 16, &caps))
				break;
			capable = (caps >> 38 & 1) ||
				(caps >> 21 & 1); /* CAP_PERFMON, CAP_SYS_ADMIN */
			break;
		}
	if (f)
		fclose(f);
	return capable;
}

/* Make sure tracefs is there; as root, mount it where the kernel expects it
 * (and remember to unmount it: a tracepoint's id is all perf_event_open()
 * needs, read while parsing, so pmon leaves the system as it found it). */
static bool tracefs_ready(struct pmon_evlist *l)
{
	char path[512];

	/* Mounted or not, readable or not: a user the kernel would not let
	 * open a tracepoint is told that, the same in every mount state. */
	if (geteuid() != 0 && !tracepoints_allowed(&l->paranoid)) {
		l->tracefs_errno = EPERM;
		return false;
	}
	pmon__fmt(path, sizeof(path), "%s/events", l->tracefs);
	if (access(path, F_OK) == 0)
		return true;
	l->tracefs_errno = errno;
	if (l->tracefs_errno == EACCES) /* there, but root's (mode 0700 since Linux 6.x) */
		return false;
	if (l->tracefs_default && geteuid() == 0 &&
	    mount("nodev", l->tracefs, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) {
		l->tracefs_mounted = true;
		pmon__fatal_umount(l->tracefs); /* a Ctrl-C now still unmounts it */
		return access(path, F_OK) == 0;
	}
	return false;
}

/* Undo tracefs_ready()'s mount. MNT_DETACH: another process that opened a
 * file there meanwhile keeps it; the mount point is gone for new lookups. */
static void tracefs_unmount(struct pmon_evlist *l)
{
	if (l->tracefs_mounted && umount2(l->tracefs, MNT_DETACH) == 0) {
		l->tracefs_mounted = false;
		pmon__fatal_umount(NULL);
	}
}

static int parse_tracepoint(struct pmon_evlist *l, struct pmon_event_desc *d, const char *ev,
			    bool *no_subsystem)
{
	const char *colon = strchr(ev, ':');
	char path[768];
	long id;

	*no_subsystem = false;
	if (!tracefs_ready(l)) {
		*no_subsystem = true;
		if (l->tracefs_errno == EACCES)
			return pmon__err(-EACCES,
					 "event '%s': %s is not readable by this user (tracepoints "
					 "need root or CAP_PERFMON)",
					 ev, l->tracefs);
		if (l->tracefs_errno == EPERM)
			return pmon__err(-EACCES,
					 "event '%s': perf_event_paranoid is %d and this user has "
					 "no CAP_PERFMON (tracepoints need root or CAP_PERFMON)",
					 ev, l->paranoid);
		return pmon__err(-ENOENT,
				 "event '%s': tracefs is not mounted at %s (as root: mount -t "
				 "tracefs nodev %s)",
				 ev, l->tracefs, l->tracefs);
	}
	pmon__fmt(path, sizeof(path), "%s/events/%.*s", l->tracefs, (int)(colon - ev), ev);
	if (access(path, F_OK)) {
		*no_subsystem = true;
		return -ENOENT;
	}
	pmon__fmt(path, sizeof(path), "%s/events/%.*s/%s/id", l->tracefs, (int)(colon - ev), ev,
		  colon + 1);
	int err = pmon__read_long(path, &id);
	if (err == -EACCES || err == -EPERM)
		return pmon__err(-EACCES,
				 "event '%s': %s is not readable (tracepoints need root or "
				 "CAP_PERFMON)",
				 ev, path);
	if (err)
		return -ENOENT;
	d->attr.type = PERF_TYPE_TRACEPOINT;
	d->attr.config = (uint64_t)id;
	d->source = PMON_EV_TRACEPOINT;
	pmon__strlcpy(d->pmu, "tracepoint", sizeof(d->pmu));
	return 0;
}

long pmon_evlist__tp_format(struct pmon_evlist *l, size_t i, char *buf, size_t n)
{
	const struct pmon_event_desc *d = i < l->n ? &l->ev[i] : NULL;
	const char *colon = d ? strchr(d->name, ':') : NULL;
	char path[768], want[32];

	if (!d || d->attr.type != PERF_TYPE_TRACEPOINT || !colon || n < 2)
		return pmon__err(-EINVAL, "event %zu is not a tracepoint", i);
	/* "sys:name", a modifier after a second colon left out */
	size_t nl = strcspn(colon + 1, ":");
	if (!tp_name_ok(d->name, (size_t)(colon - d->name)) || !nl || nl > 255)
		return pmon__err(-EINVAL, "'%s' is not a tracepoint name", d->name);
	if (!tracefs_ready(l))
		return pmon__err(-ENOENT, "tracefs is not mounted at %s", l->tracefs);
	pmon__fmt(path, sizeof(path), "%s/events/%.*s/%.*s/format", l->tracefs,
		  (int)(colon - d->name), d->name, (int)nl, colon + 1);
	long got = pmon__read_text(path, buf, n);
	tracefs_unmount(l);
	if (got < 0)
		return pmon__err((int)got, "cannot read %s: %s", path, strerror((int)-got));
	/* the format of the tracepoint the event opened: its "ID: N" line */
	pmon__fmt(want, sizeof(want), "\nID: %llu\n", (unsigned long long)d->attr.config);
	if (!strstr(buf, want))
		return pmon__err(-ENOENT, "%s is not the format of tracepoint %llu", path,
				 (unsigned long long)d->attr.config);
	return got;
}

/* A format file's line: "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:X;"
 * (the kernel's trace_format_show() / print_event_fields()). */
static bool tp_field_line(const char *line, const char *field, unsigned *offset, unsigned *size)
{
	const char *semi = strchr(line, ';'), *name;
	size_t n = strlen(field);
	long o, sz;

	if (strncmp(line, "field:", 6) || !semi)
		return false;
	name = semi;
	while (name > line && name[-1] != ' ' && name[-1] != '\t')
		name--;
	if (strncmp(name, field, n) || (name[n] != ';' && name[n] != '['))
		return false;
	const char *po = strstr(semi, "offset:"), *ps = strstr(semi, "size:");
	if (!po || !ps)
		return false;
	char *end;
	o = strtol(po + 7, &end, 10);
	if (end == po + 7 || o < 0 || o > 65535)
		return false;
	sz = strtol(ps + 5, &end, 10);
	if (end == ps + 5 || sz <= 0 || sz > 65535)
		return false;
	*offset = (unsigned)o;
	*size = (unsigned)sz;
	return true;
}

int pmon_evlist__tp_field(struct pmon_evlist *l, const char *tp, const char *field,
			  unsigned *offset, unsigned *size)
{
	const char *colon = tp ? strchr(tp, ':') : NULL;
	char path[768], buf[8192];
	int err = -ENOENT;

	if (!colon || !tp_name_ok(tp, (size_t)(colon - tp)) ||
	    !tp_name_ok(colon + 1, strlen(colon + 1)))
		return pmon__err(-EINVAL, "'%s' is not a tracepoint name (subsystem:name)",
				 tp ? tp : "");
	if (!tracefs_ready(l))
		return pmon__err(-ENOENT, "tracefs is not mounted at %s", l->tracefs);
	pmon__fmt(path, sizeof(path), "%s/events/%.*s/%s/format", l->tracefs, (int)(colon - tp), tp,
		  colon + 1);
	long n = pmon__read_text(path, buf, sizeof(buf));
	tracefs_unmount(l);
	if (n < 0)
		return pmon__err((int)n, "cannot read %s: %s", path, strerror((int)-n));
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (tp_field_line(line, field, offset, size))
			return 0;
	}
	return pmon__err(err, "tracepoint '%s' has no field '%s'", tp, field);
}

/* ---- suggestions ----------------------------------------------------- */

struct suggest {
	const char *want;
	char best[3][96];
	unsigned dist[3];
};

static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[97];

	if (la > 96 || lb > 96)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned prev = row[0], tmp;
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			tmp = row[j];
			unsigned sub = prev +
				(tolower((unsigned char)a[i - 1]) !=
				 tolower((unsigned char)b[j - 1]));
			unsigned del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = tmp;
		}
	}
	return row[lb];
}

static void consider(struct suggest *s, const char *name)
{
	unsigned d = edit_distance(s->want, name);
	size_t len = strlen(s->want);
	unsigned max = len < 6 ? 2 : (unsigned)(len / 3);

	if (d > max)
		return;
	for (int i = 0; i < 3; i++) {
		if (s->best[i][0] && !strcmp(s->best[i], name))
			return;
	}
	for (int i = 0; i < 3; i++) {
		if (!s->best[i][0] || d < s->dist[i]) {
			for (int k = 2; k > i; k--) {
				memcpy(s->best[k], s->best[k - 1], sizeof(s->best[k]));
				s->dist[k] = s->dist[k - 1];
			}
			pmon__strlcpy(s->best[i], name, sizeof(s->best[i]));
			s->dist[i] = d;
			return;
		}
	}
}

static void suggest_cb(void *ctx, enum pmon_event_source src, const char *pmu, const char *name,
		       const char *desc)
{
	(void)src, (void)pmu, (void)desc;
	consider(ctx, name);
}

static int unknown(struct pmon_evlist *l, const char *ev)
{
	struct suggest s = { .want = ev };
	struct pmon_event_opts o = { .sz = sizeof(o),
				     .sysfs_root = l->sysfs,
				     .tracefs_root = l->tracefs,
				     .no_pfm = l->no_pfm };
	char hint[320] = "";

	pmon_event_list_names(&o, NULL, suggest_cb, &s);
	if (s.best[0][0]) {
		size_t off = 0;
		for (int i = 0; i < 3 && s.best[i][0]; i++) {
			int k = snprintf(hint + off, sizeof(hint) - off, "%s'%s'",
					 i == 0					 ? "; did you mean "
						 : (i == 2 || !s.best[i + 1][0]) ? " or "
										 : ", ",
					 s.best[i]);
			if (k > 0 && (size_t)k < sizeof(hint) - off)
				off += (size_t)k;
		}
	}
	return pmon__err(-PMON_ERRNO__EVENT_UNKNOWN, "event '%s' is unknown%s", ev, hint);
}

/* ---- one event -------------------------------------------------------- */

static int apply_mods(struct pmon_event_desc *d, const char *mods, const char *ev)
{
	unsigned precise = 0;

	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u':
			d->mods |= PMON_MOD_U;
			break;
		case 'k':
			d->mods |= PMON_MOD_K;
			break;
		case 'h':
			d->mods |= PMON_MOD_H;
			break;
		case 'G':
			d->mods |= PMON_MOD_GUEST;
			break;
		case 'H':
			d->mods |= PMON_MOD_HOST;
			break;
		case 'p':
			d->mods |= PMON_MOD_PRECISE;
			if (++precise > 3)
				return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
						 "event '%s': at most 3 'p' modifiers", ev);
			break;
		case 'P':
			d->mods |= PMON_MOD_PRECISE;
			precise = 3;
			break;
		case 'I':
			d->mods |= PMON_MOD_NO_IDLE;
			d->attr.exclude_idle = 1;
			break;
		case 'D':
			d->mods |= PMON_MOD_PINNED;
			d->attr.pinned = 1;
			break;
		default:
			return pmon__err(
				-PMON_ERRNO__EVENT_SYNTAX,
				"event '%s': unknown modifier '%c' (valid: u k h G H p P I D)", ev,
				*m);
		}
	}
	d->attr.precise_ip = precise;
	/* Guest/host, as perf's parse_events__modifier_list(): G alone counts
	 * the guest only (exclude_host), H alone the host only (exclude_guest),
	 * both count both. Without either, a hardware (core PMU) event excludes
	 * the guest as perf's event_attr_init() set by default (exclude_guest =
	 * !perf_guest; perf kvm keeps that since 6.13): system-wide counts on a
	 * KVM host are the host's. Other PMUs keep 0: some (IBS, uncore) reject
	 * exclusion bits. */
	if (d->mods & (PMON_MOD_GUEST | PMON_MOD_HOST)) {
		d->attr.exclude_guest = !(d->mods & PMON_MOD_GUEST);
		d->attr.exclude_host = !(d->mods & PMON_MOD_HOST);
	} else {
		d->attr.exclude_guest = d->needs_core_pmu;
		d->attr.exclude_host = 0;
	}
	/* The seeds' ring selection: naming any of u/k/h counts only those. */
	if (d->mods & (PMON_MOD_U | PMON_MOD_K | PMON_MOD_H)) {
		d->attr.exclude_user = !(d->mods & PMON_MOD_U);
		d->attr.exclude_kernel = !(d->mods & PMON_MOD_K);
		d->attr.exclude_hv = !(d->mods & PMON_MOD_H);
	}
	return 0;
}

static bool all_mod_chars(const char *s)
{
	return *s && strspn(s, MODIFIER_CHARS) == strlen(s);
}

/* Resolve a name without modifiers. */
static int resolve(struct pmon_evlist *l, struct pmon_event_desc *d, const char *name)
{
	uint64_t id;
	size_t len = strlen(name);

	if (lookup(hw_events, PMON_ARRAY_SIZE(hw_events), name, &id)) {
		d->attr.type = PERF_TYPE_HARDWARE;
		d->attr.config = id;
		d->source = PMON_EV_HARDWARE;
		d->needs_core_pmu = true;
		pmon__strlcpy(d->pmu, "cpu", sizeof(d->pmu));
		return 0;
	}
	if (lookup(sw_events, PMON_ARRAY_SIZE(sw_events), name, &id)) {
		d->attr.type = PERF_TYPE_SOFTWARE;
		d->attr.config = id;
		d->source = PMON_EV_SOFTWARE;
		pmon__strlcpy(d->pmu, "software", sizeof(d->pmu));
		if (id == PERF_COUNT_SW_CPU_CLOCK || id == PERF_COUNT_SW_TASK_CLOCK) {
			pmon__strlcpy(d->unit, "msec", sizeof(d->unit));
			d->scale = 1e-6;
		}
		return 0;
	}
	if (lookup_cache(name, &id)) {
		d->attr.type = PERF_TYPE_HW_CACHE;
		d->attr.config = id;
		d->source = PMON_EV_CACHE;
		d->needs_core_pmu = true;
		pmon__strlcpy(d->pmu, "cpu", sizeof(d->pmu));
		return 0;
	}
	/* rNNNN: a raw config for the core PMU, in hex. */
	if (name[0] == 'r' && len > 1 && strspn(name + 1, "0123456789abcdefABCDEFxX") == len - 1) {
		const char *hex = name + 1;
		if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
			hex += 2;
		if (pmon__parse_u64(hex, 16, &id))
			return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
					 "raw event '%s': '%s' is not a 64-bit hexadecimal number",
					 name, name + 1);
		d->attr.type = PERF_TYPE_RAW;
		d->attr.config = id;
		d->source = PMON_EV_RAW;
		d->needs_core_pmu = true;
		pmon__strlcpy(d->pmu, "cpu", sizeof(d->pmu));
		return 0;
	}
	if (name[0] == 'r' && len > 1 && len < 20 && !strpbrk(name, "-_:/.") &&
	    isxdigit((unsigned char)name[1]))
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
				 "raw event '%s': '%s' is not a hexadecimal number", name,
				 name + 1);
	if (strchr(name, '/'))
		return parse_pmu_event(l, d, name);

	/* subsystem:name, when the subsystem exists in tracefs. */
	const char *colon = strchr(name, ':');
	bool no_sub = true;
	if (colon && colon[1] != ':' && !strchr(colon + 1, ':') &&
	    tp_name_ok(name, (size_t)(colon - name)) && tp_name_ok(colon + 1, strlen(colon + 1))) {
		int err = parse_tracepoint(l, d, name, &no_sub);
		if (!err || err == -EACCES)
			return err;
		if (!no_sub) {
			struct suggest s = { .want = colon + 1 };
			char dirpath[768];
			struct dirent *de;
			DIR *dir;
			pmon__fmt(dirpath, sizeof(dirpath), "%s/events/%.*s", l->tracefs,
				  (int)(colon - name), name);
			dir = opendir(dirpath);
			while (dir && (de = readdir(dir)))
				if (de->d_name[0] != '.')
					consider(&s, de->d_name);
			if (dir)
				closedir(dir);
			return pmon__err(-PMON_ERRNO__EVENT_UNKNOWN,
					 "tracepoint '%s' does not exist%s%.*s%s%s", name,
					 s.best[0][0] ? "; did you mean '" : "",
					 s.best[0][0] ? (int)(colon - name) + 1 : 0, name,
					 s.best[0], s.best[0][0] ? "'" : "");
		}
	}
	if (!find_alias(l, d, name))
		return 0;

	if (!l->no_pfm) {
		struct pmon_pfm_enc enc;
		int r = pmon__pfm_encode(name, &enc);

		if (r == 0 && enc.core && !core_pmu_present(l))
			r = -ENODEV;
		if (r == 0) {
			d->attr.type = enc.type;
			d->attr.config = enc.config;
			d->attr.config1 = enc.config1;
			d->attr.config2 = enc.config2;
			d->source = PMON_EV_PFM;
			d->needs_core_pmu = enc.core;
			pmon__strlcpy(d->pmu, enc.pmu, sizeof(d->pmu));
			return 0;
		}
		if (r == -ENODEV)
			return pmon__err(-PMON_ERRNO__PMU_MISSING,
					 "event '%s' needs the %s PMU ('%s'); %s", name,
					 enc.pmu_desc[0] ? enc.pmu_desc : enc.pmu, enc.pmu,
					 core_pmu_present(l) ? "this machine has another one"
							     : "this machine exposes no core PMU");
		if (r == -EINVAL)
			return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "event '%s': %s (libpfm4)",
					 name, enc.fstr);
	}
	if (colon && no_sub && !tracefs_ready(l) && !strchr(colon + 1, ':')) {
		/* The reason tracepoints cannot be looked up, the real one:
		 * rights first (tracefs_ready()), "not mounted" only where that
		 * is all there is to it. */
		char why[600];
		if (l->tracefs_errno == EACCES)
			pmon__fmt(why, sizeof(why),
				  "%s is not readable by this user (tracepoints need root or "
				  "CAP_PERFMON)",
				  l->tracefs);
		else if (l->tracefs_errno == EPERM)
			pmon__fmt(why, sizeof(why),
				  "perf_event_paranoid is %d and this user has no CAP_PERFMON "
				  "(tracepoints need root or CAP_PERFMON)",
				  l->paranoid);
		else
			pmon__fmt(
				why, sizeof(why),
				"tracefs is not mounted at %s (as root: mount -t tracefs nodev %s)",
				l->tracefs, l->tracefs);
		return pmon__err(-PMON_ERRNO__EVENT_UNKNOWN,
				 "event '%s' is unknown, and tracepoints cannot be checked: %s",
				 name, why);
	}
	return unknown(l, name);
}

static int parse_one(struct pmon_evlist *l, const char *text, const char *extra_mods,
		     struct pmon_event_desc *d)
{
	char name[256], mods[32] = "";
	const char *slash = strrchr(text, '/');
	size_t len = strlen(text);
	int err;

	memset(d, 0, sizeof(*d));
	d->attr.size = sizeof(d->attr);
	d->scale = 1.0;
	if (!len)
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "empty event name");
	if (len >= sizeof(name))
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "event name too long (%zu bytes)", len);
	pmon__strlcpy(name, text, sizeof(name));

	if (slash && strchr(text, '/') != slash) {
		/* pmu/terms/mods or pmu/terms/:mods */
		const char *m = slash + 1;
		if (*m == ':')
			m++;
		if (*m && !all_mod_chars(m))
			return pmon__err(
				-PMON_ERRNO__EVENT_SYNTAX,
				"event '%s': unknown modifier in '%s' (valid: u k h G H p P I D)",
				text, m);
		pmon__strlcpy(mods, m, sizeof(mods));
		name[slash - text + 1] = '\0';
	} else {
		char *c = strrchr(name, ':');
		if (c && c > name && c[-1] != ':') {
			if (!c[1])
				return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
						 "event '%s': empty modifier after ':'", text);
			if (all_mod_chars(c + 1)) {
				pmon__strlcpy(mods, c + 1, sizeof(mods));
				*c = '\0';
			} else {
				/* "cycles:x": a generic event cannot take anything else
				 * after ':', so the suffix is a bad modifier. */
				uint64_t id;
				char base[256];
				pmon__fmt(base, sizeof(base), "%.*s", (int)(c - name), name);
				if (lookup(hw_events, PMON_ARRAY_SIZE(hw_events), base, &id) ||
				    lookup(sw_events, PMON_ARRAY_SIZE(sw_events), base, &id) ||
				    lookup_cache(base, &id))
					return pmon__err(
						-PMON_ERRNO__EVENT_SYNTAX,
						"event '%s': unknown modifier '%s' (valid: u k h "
						"G H p P I D)",
						text, c + 1);
			}
		}
	}
	err = resolve(l, d, name);
	if (err == -PMON_ERRNO__EVENT_UNKNOWN) {
		/* "cycles:x": a known event with a bad modifier says so. */
		char *c = strrchr(name, ':'), saved[512], base[256];
		struct pmon_event_desc probe;

		if (c && c > name && strlen(c + 1) <= 8) {
			pmon__strlcpy(saved, pmon_errdetail(), sizeof(saved));
			pmon__strlcpy(base, name, sizeof(base));
			base[c - name] = '\0';
			memset(&probe, 0, sizeof(probe));
			if (!resolve(l, &probe, base))
				return pmon__err(
					-PMON_ERRNO__EVENT_SYNTAX,
					"event '%s': unknown modifier '%s' (valid: u k h G H p P "
					"I D)",
					text, c + 1);
			pmon__detail("%s", saved);
		}
	}
	if (err)
		return err;
	if (!d->name[0])
		pmon__strlcpy(d->name, text, sizeof(d->name));
	err = apply_mods(d, mods, text);
	if (!err && extra_mods)
		err = apply_mods(d, extra_mods, text);
	return err;
}

/* ---- lists and groups ------------------------------------------------- */

/* Hybrid Intel parts register one core PMU per core type, "cpu_core" and
 * "cpu_atom" (arch/x86/events/intel/core.c). A generic hardware or cache
 * event opened without a PMU counts on one of them only, so perf 6.x
 * (tools/perf/util/parse-events.c, parse_events_add_numeric() walking every
 * core PMU) opens one event per core PMU with the PMU's type in
 * config[63:32] (PERF_PMU_TYPE_SHIFT; kernels >= 5.18 with
 * PERF_PMU_CAP_EXTENDED_HW_TYPE) and names them "cpu_core/cycles/",
 * "cpu_atom/cycles/". Return: the core PMUs when there are two or more. */
static int push(struct pmon_evlist *l, const struct pmon_event_desc *d);

static size_t hybrid_pmus(const struct pmon_evlist *l, struct pmon_pmu_desc *p, size_t max)
{
	int n = pmon_kernel_core_pmus(l->sysfs, p, max);

	return n >= 2 ? (size_t)n : 0;
}

static bool expands(const struct pmon_event_desc *d)
{
	return (d->source == PMON_EV_HARDWARE || d->source == PMON_EV_CACHE) &&
		(d->attr.type == PERF_TYPE_HARDWARE || d->attr.type == PERF_TYPE_HW_CACHE) &&
		!(d->attr.config >> PMON_PMU_TYPE_SHIFT);
}

static void on_pmu(struct pmon_event_desc *d, const struct pmon_pmu_desc *p)
{
	char text[128];

	pmon__strlcpy(text, d->name, sizeof(text));
	d->attr.config |= (uint64_t)(uint32_t)p->type << PMON_PMU_TYPE_SHIFT;
	pmon__strlcpy(d->pmu, p->name, sizeof(d->pmu));
	pmon__fmt(d->name, sizeof(d->name), "%s/%s/", p->name, text);
}

/* Append a group (or a single event, n = 1), one copy per core PMU on a
 * hybrid part: {cycles,instructions} becomes {cpu_core/cycles/,
 * cpu_core/instructions/} and {cpu_atom/cycles/, cpu_atom/instructions/}, as
 * perf splits groups by PMU; members that do not expand (software events)
 * stay in the first copy. */
static int push_expanded(struct pmon_evlist *l, const struct pmon_event_desc *m, size_t n,
			 const struct pmon_pmu_desc *pmus, size_t npmus)
{
	bool any = false;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		any |= expands(&m[i]);
	if (!npmus || !any) {
		int leader = (int)l->n;
		for (size_t i = 0; i < n && !err; i++) {
			struct pmon_event_desc d = m[i];
			d.group = leader;
			err = push(l, &d);
		}
		return err;
	}
	for (size_t p = 0; p < npmus && !err; p++) {
		int leader = -1;
		for (size_t i = 0; i < n && !err; i++) {
			struct pmon_event_desc d = m[i];
			if (expands(&d))
				on_pmu(&d, &pmus[p]);
			else if (p)
				continue;
			if (leader < 0)
				leader = (int)l->n;
			d.group = leader;
			err = push(l, &d);
		}
	}
	return err;
}

static int push(struct pmon_evlist *l, const struct pmon_event_desc *d)
{
	if (PMON_GROW(&l->ev, &l->cap, l->n + 1))
		return -ENOMEM;
	l->ev[l->n++] = *d;
	return 0;
}

/* Length of the next top-level item: a comma ends it unless inside {} or a
 * pmu/.../ term list. */
static size_t item_len(const char *s, int *err)
{
	int depth = 0, slashes = 0;
	size_t i;

	*err = 0;
	for (i = 0; s[i]; i++) {
		if (s[i] == '{')
			depth++;
		else if (s[i] == '}' && --depth < 0)
			break;
		else if (s[i] == '/')
			slashes++;
		else if (s[i] == ',' && depth == 0 && slashes % 2 == 0)
			break;
	}
	if (depth != 0)
		*err = depth > 0 ? 1 : -1;
	return i;
}

/* The next item of the event list @spec at *@p into @item, *@p moved past
 * it and its comma. Return: 1, 0 at the end, or a syntax error (an empty
 * item, a brace unmatched, an item too long), detail set. */
static int next_item(const char *spec, const char **p, char *item, size_t len)
{
	int berr;
	size_t n;

	if (!**p)
		return 0;
	n = item_len(*p, &berr);
	if (berr > 0)
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "'%s': missing '}'", spec);
	if (berr < 0 || (*p)[n] == '}')
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "'%s': unmatched '}'", spec);
	if (n == 0 || n >= len)
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
				 n ? "'%s': event text too long" : "'%s': empty event in the list",
				 spec);
	pmon__fmt(item, len, "%.*s", (int)n, *p);
	*p += n;
	if (**p == ',' && !*++*p)
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "'%s': empty event in the list", spec);
	return 1;
}

int pmon_evlist__next(const char *spec, const char **pos, char *item, size_t len)
{
	if (!spec || !pos || !item || !len)
		return -EINVAL;
	if (!*pos) {
		*pos = spec;
		if (!*spec)
			return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "empty event list");
	}
	return next_item(spec, pos, item, len);
}

/* Call @fn with each tracepoint's "subsys:name" under tracefs (ready), in
 * tracefs's order, until it returns non-zero. Return: that, or 0. */
static int foreach_tracepoint(struct pmon_evlist *l, int (*fn)(void *arg, const char *name),
			      void *arg)
{
	char path[512], name[300];
	struct dirent **subs;
	int nsubs, err = 0;

	pmon__fmt(path, sizeof(path), "%s/events", l->tracefs);
	nsubs = scandir(path, &subs, NULL, alphasort);
	for (int s = 0; s < nsubs; s++) {
		struct dirent **evs;
		int nevs = -1;
		if (!err && subs[s]->d_type == DT_DIR && subs[s]->d_name[0] != '.') {
			pmon__fmt(path, sizeof(path), "%s/events/%s", l->tracefs, subs[s]->d_name);
			nevs = scandir(path, &evs, NULL, alphasort);
		}
		for (int e = 0; e < nevs; e++) {
			if (!err && evs[e]->d_type == DT_DIR && evs[e]->d_name[0] != '.') {
				pmon__fmt(name, sizeof(name), "%s:%s", subs[s]->d_name,
					  evs[e]->d_name);
				err = fn(arg, name);
			}
			free(evs[e]);
		}
		if (nevs >= 0)
			free(evs);
		free(subs[s]);
	}
	if (nsubs >= 0)
		free(subs);
	return err;
}

/* Most tracepoints one glob may name: perf expands 'syscalls:*' (about 700
 * here) without a limit; past this a list is a mistake, not a request. */
#define TP_GLOB_MAX 2048

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* A tracepoint glob, "subsys:name" with * ? [..] (perf's 'sched:*',
 * 'syscalls:sys_enter_*'): every tracepoint it matches, in tracefs's
 * order, added as if listed. Return: 0; -ENOENT when none matches (or
 * tracefs is not there, said as for one tracepoint), -E2BIG past
 * TP_GLOB_MAX, or an error of adding one. */
struct tp_glob {
	struct pmon_evlist *l;
	const char *glob;
	struct pmon_pmu_desc *pmus;
	size_t npmus, matched;
};

static int tp_glob_one(void *arg, const char *name)
{
	struct tp_glob *g = arg;
	struct pmon_event_desc d;
	int perr = fnmatch(g->glob, name, 0) ? 1 : parse_one(g->l, name, NULL, &d);

	/* not matched, or one of ftrace's own entries (no id: not a perf
	 * event) that no glob means */
	if (perr == 1 || perr == -PMON_ERRNO__EVENT_UNKNOWN)
		return 0;
	if (++g->matched > TP_GLOB_MAX)
		return pmon__err(-E2BIG, "'%s' matches more than %d tracepoints: name fewer",
				 g->glob, TP_GLOB_MAX);
	return perr ? perr : push_expanded(g->l, &d, 1, g->pmus, g->npmus);
}

static int add_tp_glob(struct pmon_evlist *l, const char *glob, struct pmon_pmu_desc *pmus,
		       size_t npmus)
{
	struct tp_glob g = { .l = l, .glob = glob, .pmus = pmus, .npmus = npmus };
	bool no_subsystem;
	int err;

	if (!tracefs_ready(l)) {
		struct pmon_event_desc d;
		return parse_tracepoint(l, &d, glob, &no_subsystem);
	}
	err = foreach_tracepoint(l, tp_glob_one, &g);
	if (!err && !g.matched)
		err = pmon__err(-PMON_ERRNO__EVENT_UNKNOWN, "no tracepoint matches '%s'", glob);
	return err;
}

/* perf stat -d, -dd, -ddd: tools/perf/builtin-stat.c's detailed_attrs,
 * very_detailed_attrs and very_very_detailed_attrs, in perf's order. */
static const char *const detailed_sets[] = {
	"L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses",
	"L1-icache-loads,L1-icache-load-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,"
	"iTLB-load-misses",
	"L1-dcache-prefetches,L1-dcache-prefetch-misses",
};

int pmon_evlist__add_detailed(struct pmon_evlist *l, unsigned level)
{
	int err = 0;

	if (level < 1 || level > PMON_ARRAY_SIZE(detailed_sets))
		return pmon__err(-EINVAL, "-d level %u: perf's are 1 to 3 (-d, -dd, -ddd)", level);
	for (unsigned i = 0; i < level && !err; i++)
		err = pmon_evlist__add(l, detailed_sets[i]);
	return err;
}

int pmon_evlist__add(struct pmon_evlist *l, const char *spec)
{
	size_t first = l->n;
	const char *p = spec;
	int err = 0;
	struct pmon_pmu_desc pmus[4];
	size_t npmus = hybrid_pmus(l, pmus, PMON_ARRAY_SIZE(pmus));
	struct pmon_event_desc members[64];

	pmon__clear_detail();
	if (!spec || !*spec)
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "empty event list");
	while (*p && !err) {
		char item[1024];

		if ((err = next_item(spec, &p, item, sizeof(item))) <= 0)
			break;
		err = 0;
		if (item[0] != '{' && strchr(item, ':') && !strchr(item, '/') && has_glob(item)) {
			err = add_tp_glob(l, item, pmus, npmus);
			continue;
		}
		if (item[0] != '{') {
			struct pmon_event_desc d;
			err = parse_one(l, item, NULL, &d);
			if (!err)
				err = push_expanded(l, &d, 1, pmus, npmus);
			continue;
		}
		/* {a,b,c}[:mods] */
		char *close = strrchr(item, '}');
		const char *gmods = NULL;
		if (close[1]) {
			if (close[1] != ':' || !all_mod_chars(close + 2)) {
				err = pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
						"group '%s': expected ':modifiers' after '}'",
						item);
				break;
			}
			gmods = close + 2;
		}
		*close = '\0';
		if (strchr(item + 1, '{')) {
			err = pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "'%s': groups cannot nest",
					spec);
			break;
		}
		size_t nm = 0;
		const char *q = item + 1;
		if (!*q) {
			err = pmon__err(-PMON_ERRNO__EVENT_SYNTAX, "'%s': empty group", spec);
			break;
		}
		while (*q && !err) {
			int berr;
			size_t m = item_len(q, &berr);
			char member[512];
			struct pmon_event_desc d;

			if (m == 0 || m >= sizeof(member)) {
				err = pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
						"'%s': empty event in the group", spec);
				break;
			}
			pmon__fmt(member, sizeof(member), "%.*s", (int)m, q);
			q += m;
			if (*q == ',')
				q++;
			err = parse_one(l, member, gmods, &d);
			if (!err && nm == PMON_ARRAY_SIZE(members))
				err = pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
						"'%s': more than %zu events in a group", spec,
						PMON_ARRAY_SIZE(members));
			if (!err)
				members[nm++] = d;
		}
		if (!err)
			err = push_expanded(l, members, nm, pmus, npmus);
	}
	if (err)
		l->n = first; /* nothing half-added */
	tracefs_unmount(l); /* the tracepoints' ids are read */
	return err;
}

/* ---- listing --------------------------------------------------------- */

struct list_ctx {
	const char *filter;
	void (*cb)(void *, enum pmon_event_source, const char *, const char *, const char *);
	void *ctx;
	long n;
};

static void emit(struct list_ctx *c, enum pmon_event_source src, const char *pmu, const char *name,
		 const char *desc)
{
	/* A glob ('sched:*', as perf list takes) matches whole names; else a
	 * substring of the name or PMU, case-insensitively. */
	if (c->filter && has_glob(c->filter)
		    ? fnmatch(c->filter, name, FNM_CASEFOLD) != 0
		    : c->filter && !strcasestr(name, c->filter) && !strcasestr(pmu, c->filter))
		return;
	c->cb(c->ctx, src, pmu, name, desc);
	c->n++;
}

static int emit_tracepoint(void *arg, const char *name)
{
	emit(arg, PMON_EV_TRACEPOINT, "tracepoint", name, "");
	return 0;
}

static void pfm_cb(void *ctx, const char *pmu, const char *name, const char *desc)
{
	char full[256];

	/* libpfm4's generic "perf" tables repeat the kernel's generic events. */
	if (!strncmp(pmu, "perf", 4))
		return;
	pmon__fmt(full, sizeof(full), "%s::%s", pmu, name);
	emit(ctx, PMON_EV_PFM, pmu, full, desc);
}

long pmon_event_list_names(const struct pmon_event_opts *opts, const char *filter,
			   void (*cb)(void *ctx, enum pmon_event_source src, const char *pmu,
				      const char *name, const char *desc),
			   void *ctx)
{
	struct pmon_evlist *l = pmon_evlist__new(opts);
	struct list_ctx c = { .filter = filter && *filter ? filter : NULL, .cb = cb, .ctx = ctx };
	char path[512], name[300];
	struct dirent **pmus;
	int npmus;

	if (!l)
		return -errno;
	for (size_t i = 0; i < PMON_ARRAY_SIZE(hw_events); i++)
		emit(&c, PMON_EV_HARDWARE, "cpu", hw_events[i].name, "generic hardware event");
	for (size_t i = 0; i < PMON_ARRAY_SIZE(caches); i++)
		for (size_t o = 0; o < PMON_ARRAY_SIZE(cache_ops); o++) {
			pmon__fmt(name, sizeof(name), "%s-%s", caches[i].name, cache_ops[o].many);
			emit(&c, PMON_EV_CACHE, "cpu", name, "generic cache event");
			pmon__fmt(name, sizeof(name), "%s-%s-misses", caches[i].name,
				  cache_ops[o].one);
			emit(&c, PMON_EV_CACHE, "cpu", name, "generic cache event");
		}
	for (size_t i = 0; i < PMON_ARRAY_SIZE(sw_events); i++)
		emit(&c, PMON_EV_SOFTWARE, "software", sw_events[i].name, "software event");

	/* sysfs aliases: pmu/alias/ */
	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices", l->sysfs);
	npmus = scandir(path, &pmus, NULL, alphasort);
	for (int p = 0; p < npmus; p++) {
		struct dirent **evs;
		int nevs;

		pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/events", l->sysfs,
			  pmus[p]->d_name);
		nevs = pmus[p]->d_name[0] == '.' ? -1 : scandir(path, &evs, NULL, alphasort);
		for (int e = 0; e < nevs; e++) {
			const char *en = evs[e]->d_name;
			if (en[0] != '.' && !strchr(en, '.')) {
				char terms[256] = "";
				char fp[800];
				pmon__fmt(fp, sizeof(fp), "%s/%s", path, en);
				pmon__read_text(fp, terms, sizeof(terms));
				pmon__fmt(name, sizeof(name), "%s/%s/", pmus[p]->d_name, en);
				emit(&c, PMON_EV_ALIAS, pmus[p]->d_name, name, terms);
			}
			free(evs[e]);
		}
		if (nevs >= 0)
			free(evs);
		free(pmus[p]);
	}
	if (npmus >= 0)
		free(pmus);

	/* tracepoints: subsystem:name */
	if (tracefs_ready(l))
		foreach_tracepoint(l, emit_tracepoint, &c);
	if (!l->no_pfm)
		pmon__pfm_foreach(pfm_cb, &c);
	pmon_evlist__free(l);
	return c.n;
}

int pmon_event_tracepoints_listable(const struct pmon_event_opts *opts)
{
	struct pmon_evlist *l = pmon_evlist__new(opts);
	int err = 0;

	if (!l)
		return -errno;
	if (!tracefs_ready(l)) {
		if (l->tracefs_errno == EPERM)
			err = pmon__err(
				-EPERM,
				"perf_event_paranoid is %d and this user has no CAP_PERFMON "
				"(tracepoints need root or CAP_PERFMON)",
				l->paranoid);
		else if (l->tracefs_errno == EACCES)
			err = pmon__err(-EACCES,
					"%s is not readable by this user (tracepoints need root or "
					"CAP_PERFMON)",
					l->tracefs);
		else
			err = pmon__err(-ENOENT,
					"tracefs is not mounted at %s (as root: mount -t tracefs "
					"nodev %s)",
					l->tracefs, l->tracefs);
	}
	pmon_evlist__free(l);
	return err;
}
