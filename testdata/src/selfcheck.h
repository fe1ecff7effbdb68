/*
 * selfcheck.h - instrumented call counting for the profile test workloads.
 *
 * Every workload counts its own calls so that its expected file can be
 * checked without a profiler.  The counting code is made of macros and
 * always_inline helpers only, so it adds no function symbols to the
 * binaries: the set of FUNC symbols a workload defines is exactly the set of
 * functions listed in its expected file (plus the usual CRT helpers).
 *
 * Usage: before including this header define
 *
 *     #define SC_FUNCTIONS(X) X(main, "main") X(rec, "rec") ...
 *
 * listing every traced function as (identifier, symbol name as the profiler
 * shows it, demangled for C++).  Then, in each traced function, put
 * SC_ENTER(id) first and SC_LEAVE(id) before every return (C), or
 * SC_SCOPE(id) first (C++, also correct when an exception unwinds the frame).
 *
 * Counting semantics (the same as the profiler's):
 *   calls            every activation of the function,
 *   recursive_calls  activations that began while another activation of the
 *                    same function was on the same thread's stack (depth is
 *                    kept per thread in TLS).
 *
 * Threads: the spawning function (the one that calls pthread_create) passes
 * SC_SPAWN_INFO(its id) to the new thread, whose start routine calls
 * sc_thread_begin(info) right after SC_ENTER.  Threads are counted per
 * (spawned_by, parent_spawned_by, nesting level) group, so there is no
 * limit on their number; nesting levels of SC_MAX_LEVEL (16) and deeper
 * are not recorded.
 *
 * Processes (fork from one thread at a time):
 *     int fds[2]; sc_before_fork(fds); pid = fork();
 *     child:  sc_child_after_fork(fds); ...; sc_child_report(); _exit(...)
 *             (or, to exec: add sc_raw_arg(...) to the new argv, then
 *             sc_child_report(); execv(...))
 *     parent: SC_PARENT_AFTER_FORK(id, fds); sc_merge_child(fds); waitpid
 * A module loaded with dlopen exports SC_EXPORT_MODULE(sym); the program
 * merges it with sc_merge_module("libname.so", dlsym(h, "sym")).
 * At the end of main: return sc_finish(exit_code);
 *
 * Command line flags, removed from argv by SC_INIT:
 *   --selfcheck         print the JSON report to stderr at exit
 *   --selfcheck=PATH    write the JSON report to PATH
 *   --selfcheck-raw=FD  (internal) write a line-oriented report to file
 *                       descriptor FD; used by exec'd child images to report
 *                       to the parent, which merges and prints the totals.
 * The counters always run; output happens only with a flag.
 */
#ifndef PROFILE_SELFCHECK_H
#define PROFILE_SELFCHECK_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SC_FUNCTIONS
#error "define SC_FUNCTIONS(X) before including selfcheck.h"
#endif

/* Attributes for every traced function: never inlined, cloned, merged or
 * analysed across functions, so each source-level call is one call of the
 * function's symbol at any optimisation level. */
#define TRACED __attribute__((noinline, noclone, noipa))
#define SC_INLINE static inline __attribute__((always_inline, unused))
/* A compiler barrier, to keep gcc from restructuring code around calls. */
#define SC_BARRIER() __asm__ __volatile__("" ::: "memory")

/* A workload's numeric argument: a decimal integer 0..max, else -1. */
SC_INLINE long sc_arg(const char *s, long max)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (s[0] == '\0' || *end != '\0' || v < 0 || v > max)
		return -1;
	return v;
}

enum sc_func_id {
#define SC_ENUM_(id, name) SC_ID_##id,
	SC_FUNCTIONS(SC_ENUM_)
#undef SC_ENUM_
	SC_NFUNCS
};

static const char *const sc_func_names[SC_NFUNCS] = {
#define SC_NAME_(id, name) name,
	SC_FUNCTIONS(SC_NAME_)
#undef SC_NAME_
};

static unsigned long long sc_calls[SC_NFUNCS];
static unsigned long long sc_recs[SC_NFUNCS];
static __thread int sc_depth[SC_NFUNCS];

/* Counters of one module, exported as data (not code) by shared objects so
 * the main program can read them with dlsym. */
struct sc_module {
	int n;
	const char *const *names;
	const unsigned long long *calls;
	const unsigned long long *recs;
};
#define SC_EXPORT_MODULE(sym)                                                  \
	__attribute__((visibility("default"))) const struct sc_module sym = {  \
	    SC_NFUNCS, sc_func_names, sc_calls, sc_recs}

/* sc_long_flags parses the command line's "--NAME N" and "--NAME=N" flags
 * (names[k] fills vals[k]); it returns 0, or -1 on anything else. Not a
 * traced function: inlined into main. */
SC_INLINE int sc_long_flags(int argc, char **argv, const char *const *names,
			    long *const *vals, int n)
{
	for (int i = 1; i < argc; i++) {
		int k = 0;
		size_t len = 0;
		for (; k < n; k++) {
			len = strlen(names[k]);
			if (strncmp(argv[i], names[k], len) == 0)
				break;
		}
		if (k == n)
			return -1;
		const char *val = argv[i] + len;
		if (*val == '=')
			val++;
		else if (*val == '\0' && i + 1 < argc)
			val = argv[++i];
		else
			return -1;
		char *end;
		*vals[k] = strtol(val, &end, 10);
		if (*val == '\0' || *end != '\0')
			return -1;
	}
	return 0;
}

SC_INLINE void sc_enter_(int i)
{
	__atomic_add_fetch(&sc_calls[i], 1, __ATOMIC_RELAXED);
	if (sc_depth[i]++ > 0)
		__atomic_add_fetch(&sc_recs[i], 1, __ATOMIC_RELAXED);
	SC_BARRIER();
}

SC_INLINE void sc_leave_(int i)
{
	SC_BARRIER();
	sc_depth[i]--;
}

#define SC_ENTER(id) sc_enter_(SC_ID_##id)
#define SC_LEAVE(id) sc_leave_(SC_ID_##id)

#ifdef __cplusplus
struct sc_guard {
	int i;
	__attribute__((always_inline)) explicit sc_guard(int id) : i(id)
	{
		sc_enter_(i);
	}
	__attribute__((always_inline)) ~sc_guard() { sc_leave_(i); }
};
#define SC_SCOPE(id) sc_guard sc_guard_##id(SC_ID_##id)
#endif

/* longjmp skips SC_LEAVE of the frames it discards: save the depths before
 * setjmp and restore them when setjmp returns from a longjmp. */
struct sc_depths {
	int d[SC_NFUNCS];
};
SC_INLINE void sc_save_depths(struct sc_depths *s)
{
	for (int i = 0; i < SC_NFUNCS; i++)
		s->d[i] = sc_depth[i];
}
SC_INLINE void sc_restore_depths(const struct sc_depths *s)
{
	for (int i = 0; i < SC_NFUNCS; i++)
		sc_depth[i] = s->d[i];
}

/* ---- merged results (from children and other modules), by name ---- */

#ifndef SC_MAX /* a workload of many functions defines a larger table */
#define SC_MAX 256
#endif
#define SC_NAMELEN 192

struct sc_fent {
	char name[SC_NAMELEN];
	unsigned long long calls, recs;
};
struct sc_tent {
	char spawned_by[SC_NAMELEN];
	char parent_spawned_by[SC_NAMELEN];
	long level, count;
};
struct sc_pent {
	char forked_by[SC_NAMELEN];
	char exe[SC_NAMELEN];
	long exec, count;
};

static struct sc_fent sc_xf[SC_MAX];
static int sc_nxf;
static struct sc_tent sc_xt[SC_MAX];
static int sc_nxt;
static struct sc_pent sc_xp[SC_MAX];
static int sc_nxp;

/* dst = prefix + name, truncated to SC_NAMELEN; an empty name stays empty. */
SC_INLINE void sc_cat_(char *dst, const char *prefix, const char *name)
{
	size_t np = name[0] ? strlen(prefix) : 0, nn = strlen(name);
	if (np > SC_NAMELEN - 1)
		np = SC_NAMELEN - 1;
	if (nn > SC_NAMELEN - 1 - np)
		nn = SC_NAMELEN - 1 - np;
	memcpy(dst, prefix, np);
	memcpy(dst + np, name, nn);
	dst[np + nn] = '\0';
}

SC_INLINE void sc_add_f(const char *prefix, const char *name,
			unsigned long long calls, unsigned long long recs)
{
	char key[SC_NAMELEN];
	int i;
	if (calls == 0 && recs == 0)
		return;
	sc_cat_(key, prefix, name);
	for (i = 0; i < sc_nxf; i++)
		if (strcmp(sc_xf[i].name, key) == 0)
			break;
	if (i == sc_nxf) {
		if (sc_nxf == SC_MAX)
			return;
		sc_nxf++;
		memcpy(sc_xf[i].name, key, SC_NAMELEN);
		sc_xf[i].calls = sc_xf[i].recs = 0;
	}
	sc_xf[i].calls += calls;
	sc_xf[i].recs += recs;
}

SC_INLINE void sc_add_t(const char *prefix, const char *spawned_by, long level,
			const char *parent, long count)
{
	char k1[SC_NAMELEN], k2[SC_NAMELEN];
	int i;
	sc_cat_(k1, prefix, spawned_by);
	sc_cat_(k2, prefix, parent);
	for (i = 0; i < sc_nxt; i++)
		if (strcmp(sc_xt[i].spawned_by, k1) == 0 &&
		    strcmp(sc_xt[i].parent_spawned_by, k2) == 0 &&
		    sc_xt[i].level == level)
			break;
	if (i == sc_nxt) {
		if (sc_nxt == SC_MAX)
			return;
		sc_nxt++;
		memcpy(sc_xt[i].spawned_by, k1, SC_NAMELEN);
		memcpy(sc_xt[i].parent_spawned_by, k2, SC_NAMELEN);
		sc_xt[i].level = level;
		sc_xt[i].count = 0;
	}
	sc_xt[i].count += count;
}

SC_INLINE void sc_add_p(const char *prefix, const char *forked_by,
			const char *exe, long exec, long count)
{
	char k1[SC_NAMELEN];
	int i;
	sc_cat_(k1, prefix, forked_by);
	for (i = 0; i < sc_nxp; i++)
		if (strcmp(sc_xp[i].forked_by, k1) == 0 &&
		    strcmp(sc_xp[i].exe, exe) == 0 && sc_xp[i].exec == exec)
			break;
	if (i == sc_nxp) {
		if (sc_nxp == SC_MAX)
			return;
		sc_nxp++;
		memcpy(sc_xp[i].forked_by, k1, SC_NAMELEN);
		sc_cat_(sc_xp[i].exe, "", exe);
		sc_xp[i].exec = exec;
		sc_xp[i].count = 0;
	}
	sc_xp[i].count += count;
}

/* ---- threads ---- */

/* What a new thread needs to know about itself, computed by the spawning
 * function (the innermost program function that calls pthread_create). */
struct sc_tinfo {
	int spawned_by;        /* function id */
	int parent_spawned_by; /* function id, -1 for a process's first thread */
	int level;             /* nesting level */
};

/* Threads are recorded as counts per (spawning function, parent's spawning
 * function, nesting level), not one slot per thread, so any number of
 * threads can be created (threads64 makes 64000); nesting levels from
 * SC_MAX_LEVEL on are not recorded. */
#define SC_MAX_LEVEL 16
static unsigned long sc_tcount[SC_NFUNCS][SC_NFUNCS + 1][SC_MAX_LEVEL];
static __thread int sc_my_spawned_by = -1;
static __thread int sc_my_level = 0;

SC_INLINE struct sc_tinfo sc_spawn_info_(int spawner)
{
	struct sc_tinfo t;
	t.spawned_by = spawner;
	t.parent_spawned_by = sc_my_spawned_by;
	t.level = sc_my_level + 1;
	return t;
}
/* In the spawning function, for each pthread_create: pass the result to the
 * new thread (e.g. in its argument struct). */
#define SC_SPAWN_INFO(id) sc_spawn_info_(SC_ID_##id)

/* First thing in a thread's start routine (after SC_ENTER). */
SC_INLINE void sc_thread_begin(struct sc_tinfo t)
{
	sc_my_spawned_by = t.spawned_by;
	sc_my_level = t.level;
	if (t.level >= 0 && t.level < SC_MAX_LEVEL)
		__atomic_add_fetch(&sc_tcount[t.spawned_by]
					     [t.parent_spawned_by + 1][t.level],
				   1, __ATOMIC_RELAXED);
}

/* ---- state and flags ---- */

static int sc_enabled;
static int sc_raw_fd = -1;              /* raw report destination */
static const char *sc_out_path;         /* JSON destination, NULL = stderr */
static char sc_exe[SC_NAMELEN] = "";    /* base name of /proc/self/exe */
static char *sc_args[64];
static int sc_nargs;

SC_INLINE void sc_read_exe(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	const char *base;
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	base = strrchr(buf, '/');
	sc_cat_(sc_exe, "", base ? base + 1 : buf);
}

/* Remove the --selfcheck flags from argv (anywhere) and remember them. */
SC_INLINE void sc_init(int *argc, char **argv)
{
	int j = 1;
	sc_read_exe();
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--selfcheck") == 0) {
			sc_enabled = 1;
		} else if (strncmp(a, "--selfcheck=", 12) == 0) {
			sc_enabled = 1;
			sc_out_path = a + 12;
		} else if (strncmp(a, "--selfcheck-raw=", 16) == 0) {
			sc_enabled = 1;
			sc_raw_fd = atoi(a + 16);
		} else {
			argv[j++] = argv[i];
			if (sc_nargs < 64)
				sc_args[sc_nargs++] = argv[i];
		}
	}
	argv[j] = NULL;
	*argc = j;
}
#define SC_INIT(argc, argv) sc_init(&(argc), (argv))

/* Fold this module's counters and thread registry into the merged tables. */
SC_INLINE void sc_collect_module(const char *prefix, const struct sc_module *m)
{
	for (int i = 0; i < m->n; i++)
		sc_add_f(prefix, m->names[i],
			 __atomic_load_n(&m->calls[i], __ATOMIC_RELAXED),
			 __atomic_load_n(&m->recs[i], __ATOMIC_RELAXED));
}

SC_INLINE void sc_collect_local(void)
{
	struct sc_module self = {SC_NFUNCS, sc_func_names, sc_calls, sc_recs};
	sc_collect_module("", &self);
	for (int s = 0; s < SC_NFUNCS; s++)
		for (int p = 0; p <= SC_NFUNCS; p++)
			for (int l = 0; l < SC_MAX_LEVEL; l++) {
				unsigned long c = __atomic_load_n(
				    &sc_tcount[s][p][l], __ATOMIC_RELAXED);
				if (c)
					sc_add_t("", sc_func_names[s], l,
						 p == 0 ? "" : sc_func_names[p - 1],
						 (long)c);
			}
	/* Collected once: clear so a second collection adds nothing. */
	for (int i = 0; i < SC_NFUNCS; i++)
		sc_calls[i] = sc_recs[i] = 0;
	memset(sc_tcount, 0, sizeof sc_tcount);
}

/* Merge a module loaded with dlopen; its functions get "<base name>:". */
SC_INLINE void sc_merge_module(const char *modname, const struct sc_module *m)
{
	char prefix[SC_NAMELEN];
	sc_cat_(prefix, modname, ":");
	sc_collect_module(prefix, m);
}

/* ---- fork support ---- */

/* Before fork: a pipe for the child's report (only with --selfcheck). */
SC_INLINE void sc_before_fork(int fds[2])
{
	fds[0] = fds[1] = -1;
	fflush(NULL);
	if (sc_enabled && pipe(fds) != 0) {
		perror("selfcheck: pipe");
		fds[0] = fds[1] = -1;
	}
}

/* In the child, right after fork: start counting from zero (the profiler
 * counts the child's calls separately); keep the depths, since the frames
 * of the parent's stack are still there. */
SC_INLINE void sc_child_after_fork(int fds[2])
{
	for (int i = 0; i < SC_NFUNCS; i++)
		sc_calls[i] = sc_recs[i] = 0;
	memset(sc_tcount, 0, sizeof sc_tcount);
	sc_nxf = sc_nxt = sc_nxp = 0;
	sc_my_spawned_by = -1;
	sc_my_level = 0;
	if (fds[0] >= 0)
		close(fds[0]);
	sc_raw_fd = fds[1];
	sc_out_path = NULL;
}

/* In the parent, right after fork. */
SC_INLINE void sc_parent_after_fork_(int forked_by, int fds[2])
{
	if (fds[1] >= 0)
		close(fds[1]);
	sc_add_p("", sc_func_names[forked_by], sc_exe, 0, 1);
}
#define SC_PARENT_AFTER_FORK(id, fds) sc_parent_after_fork_(SC_ID_##id, fds)

/* The argument to give an exec'd workload so it reports into the pipe, or
 * NULL without --selfcheck. */
SC_INLINE const char *sc_raw_arg(char *buf, size_t len)
{
	if (!sc_enabled || sc_raw_fd < 0)
		return NULL;
	snprintf(buf, len, "--selfcheck-raw=%d", sc_raw_fd);
	return buf;
}

/* Write everything counted so far as raw lines to fd:
 *   F name calls recursive_calls
 *   T spawned_by nesting_level parent_spawned_by count
 *   P forked_by exe exec count
 * (tab separated).  An exec'd image starts its section with "I exe". */
SC_INLINE void sc_write_raw(int fd, int exec_image)
{
	FILE *f;
	int dfd = dup(fd);
	if (dfd < 0)
		return;
	f = fdopen(dfd, "w");
	if (!f) {
		close(dfd);
		return;
	}
	sc_collect_local();
	if (exec_image)
		fprintf(f, "I\t%s\n", sc_exe);
	for (int i = 0; i < sc_nxf; i++)
		fprintf(f, "F\t%s\t%llu\t%llu\n", sc_xf[i].name, sc_xf[i].calls,
			sc_xf[i].recs);
	for (int i = 0; i < sc_nxt; i++)
		fprintf(f, "T\t%s\t%ld\t%s\t%ld\n", sc_xt[i].spawned_by,
			sc_xt[i].level, sc_xt[i].parent_spawned_by,
			sc_xt[i].count);
	for (int i = 0; i < sc_nxp; i++)
		fprintf(f, "P\t%s\t%s\t%ld\t%ld\n", sc_xp[i].forked_by,
			sc_xp[i].exe, sc_xp[i].exec, sc_xp[i].count);
	fclose(f);
}

/* In a forked child, before exec or _exit: report what it did so far. */
SC_INLINE void sc_child_report(void)
{
	if (sc_enabled && sc_raw_fd >= 0)
		sc_write_raw(sc_raw_fd, 0);
}

SC_INLINE char *sc_field_(char **s)
{
	char *start = *s, *p = start;
	while (*p && *p != '\t' && *p != '\n')
		p++;
	if (*p)
		*p++ = '\0';
	*s = p;
	return start;
}

/* In the parent, after the child's pipe end is closed: read the child's
 * report up to EOF (call before waitpid) and merge it. */
static char sc_merge_buf[1 << 16];

SC_INLINE void sc_merge_child(int fds[2])
{
	char *buf = sc_merge_buf;
	const size_t cap = sizeof sc_merge_buf;
	size_t len = 0;
	char prefix[SC_NAMELEN] = "";
	char *s;
	if (fds[0] < 0)
		return;
	for (;;) {
		ssize_t n = read(fds[0], buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap - 1)
			break;
	}
	close(fds[0]);
	fds[0] = -1;
	buf[len] = '\0';
	s = buf;
	while (*s) {
		char *line = s, *f, *a, *b, *c, *d;
		char *nl = strchr(s, '\n');
		if (nl) {
			*nl = '\0';
			s = nl + 1;
		} else {
			s += strlen(s);
		}
		f = sc_field_(&line);
		a = sc_field_(&line);
		b = sc_field_(&line);
		c = sc_field_(&line);
		d = sc_field_(&line);
		if (strcmp(f, "I") == 0) {
			sc_cat_(prefix, a, ":");
			sc_add_p("", "", a, 1, 1);
		} else if (strcmp(f, "F") == 0) {
			sc_add_f(prefix, a, strtoull(b, NULL, 10),
				 strtoull(c, NULL, 10));
		} else if (strcmp(f, "T") == 0) {
			sc_add_t(prefix, a, atol(b), c, atol(d));
		} else if (strcmp(f, "P") == 0) {
			sc_add_p(prefix, a, b, atol(c), atol(d));
		}
	}
}

/* ---- the JSON report ---- */

SC_INLINE void sc_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

SC_INLINE void sc_write_json(FILE *f, int exit_code)
{
	int order[SC_MAX];
	sc_collect_local();
	/* Functions sorted by name (insertion sort of indices). */
	for (int i = 0; i < sc_nxf; i++) {
		int j = i;
		while (j > 0 && strcmp(sc_xf[order[j - 1]].name, sc_xf[i].name) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	fprintf(f, "{\n  \"workload\": ");
	sc_json_str(f, sc_exe);
	fprintf(f, ",\n  \"args\": [");
	for (int i = 0; i < sc_nargs; i++) {
		fputs(i ? ", " : "", f);
		sc_json_str(f, sc_args[i]);
	}
	fprintf(f, "],\n  \"exit_code\": %d,\n  \"functions\": {", exit_code);
	for (int k = 0; k < sc_nxf; k++) {
		struct sc_fent *e = &sc_xf[order[k]];
		fprintf(f, "%s\n    ", k ? "," : "");
		sc_json_str(f, e->name);
		fprintf(f, ": {\"calls\": %llu, \"recursive_calls\": %llu}",
			e->calls, e->recs);
	}
	fprintf(f, "\n  },\n  \"threads\": [");
	for (int i = 0; i < sc_nxt; i++) {
		fprintf(f, "%s\n    {\"spawned_by\": ", i ? "," : "");
		sc_json_str(f, sc_xt[i].spawned_by);
		fprintf(f, ", \"nesting_level\": %ld, \"parent_spawned_by\": ",
			sc_xt[i].level);
		sc_json_str(f, sc_xt[i].parent_spawned_by);
		fprintf(f, ", \"count\": %ld}", sc_xt[i].count);
	}
	fprintf(f, "%s],\n  \"processes\": [", sc_nxt ? "\n  " : "");
	for (int i = 0; i < sc_nxp; i++) {
		fprintf(f, "%s\n    {\"forked_by\": ", i ? "," : "");
		sc_json_str(f, sc_xp[i].forked_by);
		fprintf(f, ", \"exe\": ");
		sc_json_str(f, sc_xp[i].exe);
		if (sc_xp[i].exec)
			fprintf(f, ", \"exec\": true");
		fprintf(f, ", \"count\": %ld}", sc_xp[i].count);
	}
	fprintf(f, "%s]\n}\n", sc_nxp ? "\n  " : "");
}

/* At the end of main: print the report if asked to; returns exit_code. */
SC_INLINE int sc_finish(int exit_code)
{
	if (!sc_enabled)
		return exit_code;
	if (sc_raw_fd >= 0) {
		sc_write_raw(sc_raw_fd, 1);
	} else if (sc_out_path) {
		FILE *f = fopen(sc_out_path, "w");
		if (!f) {
			perror(sc_out_path);
			return exit_code ? exit_code : 3;
		}
		sc_write_json(f, exit_code);
		if (fclose(f) != 0) {
			perror(sc_out_path);
			return exit_code ? exit_code : 3;
		}
	} else {
		sc_write_json(stderr, exit_code);
	}
	return exit_code;
}

#endif /* PROFILE_SELFCHECK_H */
