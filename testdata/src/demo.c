/*
 * demo: a tiny request server simulation, for "make demo".
 *
 *   main -> build_index -> build_tree (recursive, 31 keys)
 *   main -> start_workers -> pthread_create x3 serve_loop
 *     serve_loop -> next_request (until the queue is empty)
 *                -> handle_request -> parse_request -> parse_number
 *                                  -> lookup -> tree_search (recursive)
 *                                            -> fetch_backend (on a miss:
 *                                               usleep(2000))
 *                                  -> render_response -> render_row
 *                                  or render_stats -> render_row
 *
 * 32 requests; the totals do not depend on which worker serves which
 * request (see demo.expected.json).  About 400 calls, well under a second
 * even when every call is traced.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(build_index, "build_index")                                          \
	X(build_tree, "build_tree")                                            \
	X(start_workers, "start_workers")                                      \
	X(serve_loop, "serve_loop")                                            \
	X(next_request, "next_request")                                        \
	X(handle_request, "handle_request")                                    \
	X(parse_request, "parse_request")                                      \
	X(parse_number, "parse_number")                                        \
	X(lookup, "lookup")                                                    \
	X(tree_search, "tree_search")                                          \
	X(fetch_backend, "fetch_backend")                                      \
	X(render_response, "render_response")                                  \
	X(render_stats, "render_stats")                                        \
	X(render_row, "render_row")
#include "selfcheck.h"

#include <pthread.h>

#define NKEYS 31
#define NREQ 32
#define NWORKERS 3

struct node {
	int key;
	long value;
	struct node *left, *right;
};

struct request {
	char text[32];
	int status;
	int key;
	long value;
	int rows;
	int from_backend;
	char body[256];
};

struct worker {
	struct sc_tinfo ti;
	int id;
	int served;
};

static struct node pool[NKEYS];
static int npool;
static int sorted_keys[NKEYS];
static struct node *root;
static struct request requests[NREQ];
static int next_index;
static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;

SC_INLINE long value_of(int key) { return (long)key * key + 7; }

TRACED struct node *build_tree(int lo, int hi)
{
	SC_ENTER(build_tree);
	struct node *n = NULL;
	if (lo <= hi) {
		int mid = (lo + hi) / 2;
		n = &pool[npool++];
		n->key = sorted_keys[mid];
		n->value = value_of(n->key);
		n->left = build_tree(lo, mid - 1);
		n->right = build_tree(mid + 1, hi);
	}
	SC_LEAVE(build_tree);
	return n;
}

TRACED struct node *build_index(void)
{
	SC_ENTER(build_index);
	for (int i = 0; i < NKEYS; i++)
		sorted_keys[i] = i + 1; /* 1, 2, ..., 31 */
	struct node *r = build_tree(0, NKEYS - 1);
	SC_LEAVE(build_index);
	return r;
}

TRACED struct node *tree_search(struct node *n, int key)
{
	SC_ENTER(tree_search);
	struct node *r;
	if (!n || n->key == key)
		r = n;
	else
		r = tree_search(key < n->key ? n->left : n->right, key);
	SC_LEAVE(tree_search);
	return r;
}

/* The slow path: pretend to ask another service. */
TRACED long fetch_backend(int key)
{
	SC_ENTER(fetch_backend);
	usleep(2000);
	long v = value_of(key);
	SC_LEAVE(fetch_backend);
	return v;
}

TRACED long lookup(int key, int *from_backend)
{
	SC_ENTER(lookup);
	struct node *n = tree_search(root, key);
	long v;
	*from_backend = n == NULL;
	v = n ? n->value : fetch_backend(key);
	SC_LEAVE(lookup);
	return v;
}

TRACED int parse_number(const char *s, int *out)
{
	SC_ENTER(parse_number);
	int v = 0, ok = *s != '\0';
	for (; *s; s++) {
		if (*s < '0' || *s > '9') {
			ok = 0;
			break;
		}
		v = v * 10 + (*s - '0');
	}
	*out = v;
	SC_LEAVE(parse_number);
	return ok;
}

/* Returns 1 for "GET /item/<n>", 2 for "GET /stats", 0 otherwise. */
TRACED int parse_request(const char *text, int *key)
{
	SC_ENTER(parse_request);
	int route = 0;
	if (strncmp(text, "GET /item/", 10) == 0)
		route = parse_number(text + 10, key) ? 1 : 0;
	else if (strcmp(text, "GET /stats") == 0)
		route = 2;
	SC_LEAVE(parse_request);
	return route;
}

TRACED int render_row(char *buf, size_t len, const char *name, long value)
{
	SC_ENTER(render_row);
	int n = snprintf(buf, len, "<%s>%ld</%s>", name, value, name);
	SC_LEAVE(render_row);
	return n;
}

TRACED void render_response(struct request *r)
{
	SC_ENTER(render_response);
	static const char *const names[] = {"value", "double", "triple"};
	size_t off = 0;
	r->rows = 1 + r->key % 3;
	for (int i = 0; i < r->rows; i++)
		off += render_row(r->body + off, sizeof r->body - off, names[i],
				  r->value * (i + 1));
	SC_LEAVE(render_response);
}

TRACED void render_stats(struct request *r)
{
	SC_ENTER(render_stats);
	r->rows = 1;
	r->value = NKEYS;
	render_row(r->body, sizeof r->body, "keys", NKEYS);
	SC_LEAVE(render_stats);
}

TRACED void handle_request(struct request *r)
{
	SC_ENTER(handle_request);
	switch (parse_request(r->text, &r->key)) {
	case 1:
		r->value = lookup(r->key, &r->from_backend);
		render_response(r);
		r->status = 200;
		break;
	case 2:
		render_stats(r);
		r->status = 200;
		break;
	default:
		r->status = 400;
	}
	SC_LEAVE(handle_request);
}

/* The next request to serve, or -1 when there are none left. */
TRACED int next_request(void)
{
	SC_ENTER(next_request);
	pthread_mutex_lock(&queue_mu);
	int i = next_index < NREQ ? next_index++ : -1;
	pthread_mutex_unlock(&queue_mu);
	SC_LEAVE(next_request);
	return i;
}

TRACED void *serve_loop(void *p)
{
	SC_ENTER(serve_loop);
	struct worker *w = (struct worker *)p;
	int i;
	sc_thread_begin(w->ti);
	while ((i = next_request()) >= 0) {
		handle_request(&requests[i]);
		w->served++;
	}
	SC_LEAVE(serve_loop);
	return NULL;
}

TRACED int start_workers(struct worker *w, int n)
{
	SC_ENTER(start_workers);
	pthread_t t[NWORKERS];
	int started = 0;
	for (int i = 0; i < n; i++) {
		w[i].ti = SC_SPAWN_INFO(start_workers);
		w[i].id = i;
		int err = pthread_create(&t[i], NULL, serve_loop, &w[i]);
		if (err) {
			fprintf(stderr, "demo: pthread_create: %s\n",
				strerror(err));
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	SC_LEAVE(start_workers);
	return started == n;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	struct worker workers[NWORKERS];
	memset(workers, 0, sizeof workers);

	root = build_index();
	for (int i = 0; i < NREQ; i++) {
		if (i % 8 == 7)
			snprintf(requests[i].text, sizeof requests[i].text,
				 "GET /stats");
		else
			snprintf(requests[i].text, sizeof requests[i].text,
				 "GET /item/%d", (i * 7 + 3) % 40);
	}

	printf("demo: serving %d requests with %d workers\n", NREQ, NWORKERS);
	int ok = start_workers(workers, NWORKERS);

	int items = 0, backend = 0, stats = 0, bad = 0;
	for (int i = 0; i < NREQ; i++) {
		struct request *r = &requests[i];
		int is_stats = i % 8 == 7;
		long want = is_stats ? NKEYS : value_of((i * 7 + 3) % 40);
		if (r->status != 200 || r->value != want)
			bad++;
		if (is_stats)
			stats++;
		else
			items++;
		backend += r->from_backend;
		printf("  %-14s -> %d  %-7s %s\n", r->text, r->status,
		       is_stats ? "stats" : r->from_backend ? "backend" : "index",
		       r->body);
	}
	printf("demo: %d items (%d from index, %d from backend), %d stats, "
	       "%d errors\n",
	       items, items - backend, backend, stats, bad);
	SC_LEAVE(main);
	return sc_finish(ok && bad == 0 ? 0 : 1);
}
