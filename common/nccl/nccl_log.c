/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reader of NCCL's INFO log (gdrb_nccl_log.h). The lines it understands, after
 * the prefix "<host>:<pid>:<tid> [<cudaDev>] NCCL INFO " (src/debug.cc; since 2.26 a
 * timestamp may come first), in every form NCCL has printed them:
 *   Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d(%d)/GDRDMA(PCI)/Shared
 *     (2.12 on; the (proxy) PXN form, "(PCI)" from 2.26; [%lx] bus ids before 2.18;
 *     "Channel %02d :" without the connection index before 2.12; "Ring %02d : %d -> %d"
 *     in 2.4 and older)
 *   Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/IPC|CUMEM|MNNVL|direct pointer|indirect/...
 *   Channel %02d : %d[%d] -> %d[%d] via SHM/%s/%s (2.30: via SHM/direct)
 *   CollNet %02d/%1d : %d [send] via COLLNET/%s/%d/GDRDMA(PCI)
 *   Connected all rings[, use ring PXN %d GDR %d (2.24 on)]
 *   NCCL version %s
 * Everything else (WARN, TRACE, the ring and tree listings, a user's own prints) is
 * passed over. Given an owner (gdrb_nccl_owner), a line whose "<host>:<pid>:" is not the
 * owner's, or that has more than a "[...] " timestamp before it, is counted as foreign
 * and nothing else. A line that starts like a connection but does not parse is counted in
 * unparsed, so that a format NCCL changes shows up instead of reading as "no network".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrb_nccl_log.h"

_Static_assert(sizeof(struct gdrb_nccl_links) == 16 * 4 + 48 + 32 + 48 + 32 + GDRB_NCCL_NICS * (24 + 4) + 4,
	       "struct gdrb_nccl_links has padding: its wire form would carry stray bytes");

/* NET/IB device numbers whose name and speed are kept (the connections' NET/IB/<dev>). */
#define IB_DEVS 32

/* What NCCL's IB plugin said about its devices, joined to the connections at the end. */
struct ib_devs {
	char name[IB_DEVS][24];                 /* dev -> "mlx5_0:1" ("Using" line, virtual devices) */
	struct {
		char name[24];
		uint32_t mbps;
	} speed[IB_DEVS];                       /* "mlx5_0:1" -> Mb/s (device lines) */
	unsigned nspeed;
};

/* A line being assembled from chunks; bad once it holds a NUL or outgrows line. */
struct reader {
	struct gdrb_nccl_links *l;
	struct ib_devs ib;
	struct gdrb_nccl_tuning *t;             /* NULL: TUNING lines passed over */
	const struct gdrb_nccl_owner *who;      /* NULL: every process's lines count */
	size_t done;                            /* bytes of the complete lines fed so far */
	size_t pending;                         /* bytes of the line under way from earlier chunks */
	size_t len;
	bool bad;
	char line[GDRB_NCCL_LINE_MAX + 1];
};

static void bump(uint32_t *n)
{
	if (*n < UINT32_MAX)
		(*n)++;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

static bool version_char(char c)
{
	return name_char(c) || c == '+';
}

/* Whether the "+"-joined set already holds name. */
static bool set_has(const char *set, const char *name)
{
	size_t n = strlen(name);
	const char *p = set;

	while (*p) {
		const char *end = strchr(p, '+');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && memcmp(p, name, n) == 0)
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

/*
 * Adds the first n bytes of name to the set, cleaned: [A-Za-z0-9._-] kept, anything
 * else '_', a leading '.' too (so no name reads as the "..." that ends a cut set), at
 * most GDRB_NCCL_NAME_MAX bytes. Room for "+..." is always kept, and used once full.
 */
static void set_add(char *set, size_t size, const char *name, size_t n)
{
	char clean[GDRB_NCCL_NAME_MAX + 1];
	size_t i, have = strlen(set);

	if (n > GDRB_NCCL_NAME_MAX)
		n = GDRB_NCCL_NAME_MAX;
	for (i = 0; i < n; i++)
		clean[i] = name_char(name[i]) && !(i == 0 && name[i] == '.') ? name[i] : '_';
	clean[n] = '\0';
	if (n == 0 || set_has(set, clean) || set_has(set, "..."))
		return;
	if (have + (have ? 1 : 0) + n + 4 < size)
		snprintf(set + have, size - have, "%s%s", have ? "+" : "", clean);
	else
		snprintf(set + have, size - have, "%s...", have ? "+" : "");
}

/* Every name of src's set into dst's. */
static void set_merge(char *dst, size_t size, const char *src)
{
	const char *p = src;

	while (*p) {
		const char *end = strchr(p, '+');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == 3 && memcmp(p, "...", 3) == 0) {
			size_t have = strlen(dst);

			if (!set_has(dst, "..."))
				snprintf(dst + have, size - have, "%s...", have ? "+" : "");
		} else {
			set_add(dst, size, p, len);
		}
		if (!end)
			break;
		p = end + 1;
	}
}

/* Skips the literal word at *p; false (and *p as it was) if it is not there. */
static bool take(const char **p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*p, word, n) != 0)
		return false;
	*p += n;
	return true;
}

/* A decimal of 1 to 9 digits (below 10^9: no overflow) into *v. */
static bool take_num(const char **p, int32_t *v)
{
	const char *s = *p;
	int32_t n = 0;
	int digits = 0;

	while (*s >= '0' && *s <= '9') {
		if (++digits > 9)
			return false;
		n = n * 10 + (*s++ - '0');
	}
	if (!digits)
		return false;
	*v = n;
	*p = s;
	return true;
}

/* "<rank>" or "<rank>[<dev>]": dev the CUDA device (decimal, 2.18 on) or the PCI bus id
 * (%lx, up to 2.17), perhaps -1. */
static bool take_endpoint(const char **p)
{
	const char *s = *p;
	int32_t rank;
	int digits = 0;

	if (!take_num(&s, &rank))
		return false;
	if (*s == '[') {
		s++;
		if (*s == '-')
			s++;
		while ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')) {
			if (++digits > 16)
				return false;
			s++;
		}
		if (!digits || *s++ != ']')
			return false;
	}
	*p = s;
	return true;
}

/* After a network device: "/GDRDMA", "(PCI)", "/Shared" in any order, then the end
 * (spaces allowed); *gdr says whether /GDRDMA was among them. */
static bool take_net_suffixes(const char *s, bool *gdr)
{
	*gdr = false;
	for (;;) {
		if (take(&s, "/GDRDMA"))
			*gdr = true;
		else if (!take(&s, "(PCI)") && !take(&s, "/Shared"))
			break;
	}
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0';
}

/* "NET/<name>/<dev>[(<proxy>)]<suffixes>" (s past "NET/"). */
static bool net_conn(const char *s, struct gdrb_nccl_links *l)
{
	const char *name = s, *slash = strchr(s, '/');
	int32_t dev, proxy;
	bool pxn = false, gdr;

	if (!slash || slash == name)
		return false;
	s = slash + 1;
	if (!take_num(&s, &dev))
		return false;
	if (*s == '(') {
		s++;
		if (!take_num(&s, &proxy) || *s++ != ')')
			return false;
		pxn = true;
	}
	if (!take_net_suffixes(s, &gdr))
		return false;
	bump(&l->net);
	if (slash - name == 2 && !strncmp(name, "IB", 2) && dev < IB_DEVS)
		l->ib_used |= 1u << dev;
	if (gdr)
		bump(&l->net_gdr);
	if (pxn)
		bump(&l->net_pxn);
	set_add(l->nets, sizeof(l->nets), name, (size_t)(slash - name));
	return true;
}

/* "Channel ..." or "Ring ...": a connection through NET, P2P, SHM or another transport. */
static bool channel_conn(const char *s, struct gdrb_nccl_links *l)
{
	int32_t channel, conn;
	const char *end;

	if (!take_num(&s, &channel))
		return false;
	if (take(&s, "/") && !take_num(&s, &conn))
		return false;
	if (!take(&s, " : ") || !take_endpoint(&s) || !take(&s, " -> ") || !take_endpoint(&s))
		return false;
	if (!take(&s, " [send]"))
		(void)take(&s, " [receive]");
	if (!take(&s, " via "))
		return false;
	if (take(&s, "NET/"))
		return net_conn(s, l);
	if (take(&s, "P2P/")) {
		bump(&l->p2p);
		return true;
	}
	/* SHM/... from 2.13 on; "direct shared memory" in 2.4 to 2.12 (src/transport/shm.cc). */
	if (take(&s, "SHM/") || (take(&s, "direct shared memory") && *s == '\0')) {
		bump(&l->shm);
		return true;
	}
	end = strchr(s, '/');
	if (!end)
		end = s + strlen(s);
	if (end == s)
		return false;
	bump(&l->other);
	set_add(l->others, sizeof(l->others), s, (size_t)(end - s));
	return true;
}

/*
 * "CollNet %02d/%1d : %d [send] via COLLNET/%s/%d%s%s" (src/transport/coll_net.cc, 2.14 on);
 * without "/%1d" in 2.9 to 2.13, and as "Coll %02d : ..." in 2.7 and 2.8 (s past the word).
 */
static bool collnet_conn(const char *s, struct gdrb_nccl_links *l)
{
	int32_t channel, conn, rank, dev;
	const char *name, *slash;
	bool gdr;

	if (!take_num(&s, &channel) || (take(&s, "/") && !take_num(&s, &conn)) ||
	    !take(&s, " : ") || !take_num(&s, &rank))
		return false;
	if (!take(&s, " [send]") && !take(&s, " [receive]"))
		return false;
	if (!take(&s, " via COLLNET/"))
		return false;
	name = s;
	slash = strchr(s, '/');
	if (!slash || slash == name)
		return false;
	s = slash + 1;
	if (!take_num(&s, &dev) || !take_net_suffixes(s, &gdr))
		return false;
	bump(&l->collnet);
	if (gdr)
		bump(&l->collnet_gdr);
	set_add(l->collnets, sizeof(l->collnets), name, (size_t)(slash - name));
	return true;
}

/* "Connected all rings" and, 2.24 on, ", use ring PXN %d GDR %d" (both 0 or 1). */
static bool rings_line(const char *s, struct gdrb_nccl_links *l)
{
	int32_t pxn, gdr;

	bump(&l->rings);
	if (*s == '\0')
		return true;
	if (!take(&s, ", use ring PXN ") || !take_num(&s, &pxn) || !take(&s, " GDR ") ||
	    !take_num(&s, &gdr) || *s != '\0' || pxn > 1 || gdr > 1)
		return false;
	if (l->ring_gdr < 0 || gdr < l->ring_gdr)
		l->ring_gdr = gdr;
	if (pxn > l->ring_pxn)
		l->ring_pxn = pxn;
	return true;
}

/* "NCCL version 2.28.9+cuda12.9": the first token, cleaned, kept if none is yet. */
static void version_line(const char *s, struct gdrb_nccl_links *l)
{
	size_t i;

	if (l->version[0])
		return;
	for (i = 0; s[i] && s[i] != ' ' && i < sizeof(l->version) - 1; i++)
		l->version[i] = version_char(s[i]) ? s[i] : '_';
	l->version[i] = '\0';
}

/* Skips digits backwards from *p (not past line); false if there are none. */
static bool back_digits(const char *line, const char **p)
{
	const char *s = *p;

	while (s > line && s[-1] >= '0' && s[-1] <= '9')
		s--;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/* Skips the character c backwards from *p; false if it is not there. */
static bool back_char(const char *line, const char **p, char c)
{
	if (*p == line || (*p)[-1] != c)
		return false;
	(*p)--;
	return true;
}

/* Where a line's prefix "<host>:<pid>:<tid> [<dev>] NCCL INFO " puts its parts. */
struct prefix {
	const char *lead;       /* the line's start: "" or, since 2.26, a timestamp before the host */
	const char *host, *pid; /* each ends at the next ':' */
	size_t host_len, pid_len;
};

/* The message after "<host>:<pid>:<tid> [<dev>] NCCL INFO ", or NULL for any other line. */
static const char *info_message(const char *line, struct prefix *px)
{
	static const char marker[] = "] NCCL INFO ";
	const char *m = strstr(line, marker), *p = m, *pid_end, *host_end;

	if (!m || !back_digits(line, &p))
		return NULL;
	(void)back_char(line, &p, '-');
	if (!back_char(line, &p, '[') || !back_char(line, &p, ' ') || !back_digits(line, &p) ||
	    !back_char(line, &p, ':'))
		return NULL;
	pid_end = p;
	if (!back_digits(line, &p))
		return NULL;
	px->pid = p;
	px->pid_len = (size_t)(pid_end - p);
	if (!back_char(line, &p, ':'))
		return NULL;
	/* A host name, not empty: back to the line's start or a blank. */
	host_end = p;
	while (p > line && p[-1] != ' ')
		p--;
	if (p == host_end)
		return NULL;
	px->lead = line;
	px->host = p;
	px->host_len = (size_t)(host_end - p);
	return m + sizeof(marker) - 1;
}

/*
 * Whether a prefix is the owner's: the host name and the pid exactly as NCCL prints them
 * for that process (no leading zero, no other case), after nothing or after a timestamp
 * in brackets and one blank ("[%F %T] ", NCCL_DEBUG_TIMESTAMP_FORMAT's default form).
 */
static bool owned(const struct prefix *px, const struct gdrb_nccl_owner *who)
{
	char pid[24];
	int n = snprintf(pid, sizeof(pid), "%ld", who->pid);
	const char *lead_end = px->host;

	if (px->host != px->lead) {
		if (px->lead[0] != '[' || lead_end - px->lead < 3 || lead_end[-1] != ' ' || lead_end[-2] != ']' ||
		    memchr(px->lead + 1, ']', (size_t)(lead_end - px->lead - 3)))
			return false;
	}
	return n > 0 && (size_t)n == px->pid_len && !memcmp(px->pid, pid, px->pid_len) &&
	       strlen(who->host) == px->host_len && !memcmp(px->host, who->host, px->host_len);
}

/* NCCL's algorithms and protocols by number (src/include/nccl_common.h, 2.20 to 2.23) and by
 * the names NCCL_ALGO and NCCL_PROTO take (ncclAlgoStr, ncclProtoStr in src/init.cc). */
static const char *const algo_names[] = { "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT" };
static const char *const proto_names[] = { "LL", "LL128", "Simple" };

/* The spelling of ncclAlgoToString / ncclProtoToString (2.24 on: "RING", "NVLS_TREE",
 * "SIMPLE") made the one NCCL_ALGO takes; an unknown name is kept, cleaned. */
static void add_name(char *set, size_t size, const char *const *names, size_t nnames, const char *s, size_t n)
{
	size_t i, j, k;

	for (i = 0; i < nnames; i++) {
		for (j = k = 0; j < n && names[i][k]; j++) {
			if (s[j] == '_')
				continue;
			if ((s[j] | 0x20) != (names[i][k] | 0x20))
				break;
			k++;
		}
		if (j == n && !names[i][k]) {
			set_add(set, size, names[i], strlen(names[i]));
			return;
		}
	}
	set_add(set, size, s, n);
}

static size_t word_len(const char *s)
{
	size_t n = 0;

	while (name_char(s[n]))
		n++;
	return n;
}

/*
 * The TUNING subsystem's line for a collective call, printed by rank 0 (src/enqueue.cc):
 *   2.20-2.22  "%ld Bytes -> Algo %d proto %d time %f"
 *   2.23       "%s: %ld Bytes -> Algo %d proto %d time %f"
 *   2.24 on    "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}"
 *   2.27 on    "%s [Symmetric]: %ld Bytes -> Kernel %s nchannels %d nthreads %d[ nWorks %d]"
 * false where it starts as one but does not parse; *mine false where it is another line.
 */
static bool tuning_line(const char *s, struct gdrb_nccl_tuning *t, bool *mine)
{
	const char *w = s, *algo, *proto;
	size_t n, algo_len, proto_len;
	int32_t num, lo, hi, channels = 0;

	*mine = false;
	n = word_len(w);
	if (n && (w[n] == ':' || !strncmp(w + n, " [Symmetric]:", 13))) {
		s = strchr(w + n, ':') + 1;
		(void)take(&s, " ");
		w = s;
	}
	while (*s >= '0' && *s <= '9')
		s++;
	if (s == w || !take(&s, " Bytes -> "))
		return true;
	*mine = true;
	if (take(&s, "Kernel ")) {
		if (!(n = word_len(s)))
			return false;
		s += n;
		if (!take(&s, " nchannels ") || !take_num(&s, &channels) || !take(&s, " nthreads "))
			return false;
		set_add(t->algos, sizeof(t->algos), "Symmetric", 9);
	} else {
		if (!take(&s, "Algo "))
			return false;
		if (take_num(&s, &num)) {       /* 2.20 to 2.23: numbers */
			if ((size_t)num >= sizeof(algo_names) / sizeof(algo_names[0]))
				return false;
			algo = algo_names[num];
			algo_len = strlen(algo);
			if (!take(&s, " proto ") || !take_num(&s, &num) ||
			    (size_t)num >= sizeof(proto_names) / sizeof(proto_names[0]) || !take(&s, " time "))
				return false;
			proto = proto_names[num];
			proto_len = strlen(proto);
		} else {
			algo = s;
			if (!(algo_len = word_len(s)))
				return false;
			s += algo_len;
			if (!take(&s, " proto ") || !(proto_len = word_len(s)))
				return false;
			proto = s;
			s += proto_len;
			if (!take(&s, " channel{Lo..Hi}={") || !take_num(&s, &lo) || !take(&s, "..") ||
			    !take_num(&s, &hi) || !take(&s, "}") || hi < lo || hi - lo >= 4096)
				return false;
			channels = hi - lo + 1;
		}
		add_name(t->algos, sizeof(t->algos), algo_names, sizeof(algo_names) / sizeof(algo_names[0]),
			 algo, algo_len);
		add_name(t->protos, sizeof(t->protos), proto_names, sizeof(proto_names) / sizeof(proto_names[0]),
			 proto, proto_len);
	}
	if ((uint32_t)channels > t->channels)
		t->channels = (uint32_t)channels;
	bump(&t->calls);
	return true;
}

/* "<name>:<port>" into key (a name of NCCL's device characters, '+' joining a merged one). */
static bool ib_key(const char *name, size_t nlen, int32_t port, char *key, size_t len)
{
	size_t i;
	int n;

	if (!nlen || nlen > 15 || port > 999)
		return false;
	for (i = 0; i < nlen; i++)
		if (!name_char(name[i]) && name[i] != '+')
			return false;
	n = port >= 0 ? snprintf(key, len, "%.*s:%d", (int)nlen, name, (int)port) :
			snprintf(key, len, "%.*s", (int)nlen, name);
	return n > 0 && (size_t)n < len;
}

static void ib_speed(struct ib_devs *ib, const char *key, int32_t mbps)
{
	unsigned i;

	for (i = 0; i < ib->nspeed; i++)
		if (!strcmp(ib->speed[i].name, key))
			return;         /* the first line for a device stands */
	if (ib->nspeed >= IB_DEVS || mbps <= 0)
		return;
	snprintf(ib->speed[ib->nspeed].name, sizeof(ib->speed[0].name), "%s", key);
	ib->speed[ib->nspeed++].mbps = (uint32_t)mbps;
}

/*
 * NCCL's IB plugin on its devices (src/transport/net_ib/init.cc):
 *   "NET/IB : Using [%d]%s:%d[:rail][:plane]/%s ... ; OOB %s:%s"   (2.4 on: dev -> name:port)
 *   "NET/IB: [%d] %s:%s:%d/%s provider=%s speed=%d context=..."     (2.27 on: name:port -> Mb/s)
 *   "NET/IB : Made virtual device [%d] name=%s speed=%d ndevs=%d"  (a merged device)
 * s is past "NET/IB".
 */
static void ib_line(const char *s, struct ib_devs *ib)
{
	char key[24];
	const char *name;
	int32_t dev, port, mbps;

	if (take(&s, " : Using")) {
		while (take(&s, " [") && take_num(&s, &dev) && take(&s, "]")) {
			size_t nlen;

			name = s;
			while (*s && *s != ':' && *s != ' ')
				s++;
			nlen = (size_t)(s - name);
			if (!take(&s, ":") || !take_num(&s, &port))
				return;
			if (dev < IB_DEVS && ib_key(name, nlen, port, key, sizeof(key)))
				snprintf(ib->name[dev], sizeof(ib->name[dev]), "%s", key);
			while (*s && *s != ' ')
				s++;
		}
	} else if (take(&s, " : Made virtual device [")) {
		if (!take_num(&s, &dev) || !take(&s, "] name="))
			return;
		name = s;
		while (*s && *s != ' ')
			s++;
		if (!ib_key(name, (size_t)(s - name), -1, key, sizeof(key)) || !take(&s, " speed=") || !take_num(&s, &mbps))
			return;
		if (dev < IB_DEVS)
			snprintf(ib->name[dev], sizeof(ib->name[dev]), "%s", key);
		ib_speed(ib, key, mbps);
	} else if (take(&s, ": [") && take_num(&s, &dev) && take(&s, "] ")) {
		size_t nlen;

		name = s;
		while (*s && *s != ':' && *s != ' ')
			s++;
		nlen = (size_t)(s - name);
		if (!take(&s, ":"))
			return;
		while (*s && *s != ':' && *s != ' ')
			s++;
		if (!take(&s, ":") || !take_num(&s, &port) || !(s = strstr(s, " speed=")))
			return;
		s += 7;
		if (take_num(&s, &mbps) && ib_key(name, nlen, port, key, sizeof(key)))
			ib_speed(ib, key, mbps);
	}
}

static void parse_line(char *line, size_t len, struct gdrb_nccl_links *l, const struct gdrb_nccl_owner *who,
		       struct gdrb_nccl_tuning *t, struct ib_devs *ib)
{
	struct prefix px;
	const char *msg;
	bool ok = true;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	line[len] = '\0';
	if (line[0] == '#')
		return;
	msg = info_message(line, &px);
	if (!msg)
		return;
	if (who && !owned(&px, who)) {
		bump(&l->foreign);
		return;
	}
	if (take(&msg, "Channel ") || take(&msg, "Ring "))
		ok = channel_conn(msg, l) || !strstr(msg, " via");
	else if (take(&msg, "CollNet ") || take(&msg, "Coll "))
		ok = collnet_conn(msg, l) || !strstr(msg, " via");
	else if (take(&msg, "NVLS comm "))      /* src/transport/nvls.cc: NVLS buffers set up (2.17 on) */
		bump(&l->nvls);
	else if (take(&msg, "Connected all rings"))
		ok = rings_line(msg, l);
	else if (take(&msg, "NCCL version "))
		version_line(msg, l);
	else if (take(&msg, "NET/IB"))
		ib_line(msg, ib);
	else if (t) {
		bool mine;

		if (!tuning_line(msg, t, &mine))
			bump(&t->unparsed);
	}
	if (!ok)
		bump(&l->unparsed);
}

/* The line held so far is complete (or, at the end, cut off). */
static void end_line(struct reader *r, bool complete)
{
	bump(&r->l->lines);
	if (r->bad || !complete)
		bump(&r->l->skipped);
	else
		parse_line(r->line, r->len, r->l, r->who, r->t, &r->ib);
	r->len = 0;
	r->bad = false;
}

static void feed(struct reader *r, const char *data, size_t n)
{
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t part = nl ? (size_t)(nl - data) : n;

		if (!r->bad) {
			if (part > GDRB_NCCL_LINE_MAX - r->len || memchr(data, '\0', part)) {
				r->bad = true;
			} else {
				memcpy(r->line + r->len, data, part);
				r->len += part;
			}
		}
		if (!nl) {
			r->pending += part;
			return;
		}
		end_line(r, true);
		r->done += part + 1 + r->pending;
		r->pending = 0;
		data = nl + 1;
		n -= part + 1;
	}
}

/* The NET/IB devices the connections used, named and with their speed where the log says. */
static void join_nics(struct reader *r)
{
	struct gdrb_nccl_links *l = r->l;
	unsigned d, k = 0, i, j;

	memset(l->nics, 0, sizeof(l->nics));
	for (d = 0; d < IB_DEVS; d++) {
		const char *name = r->ib.name[d][0] ? r->ib.name[d] : "?";

		if (!(l->ib_used & (1u << d)))
			continue;
		for (j = 0; j < k && strcmp(l->nics[j].name, name); j++)
			;
		if (j < k)
			continue;
		if (k == GDRB_NCCL_NICS) {
			/* More devices than kept: the rate is not known, not that of the first few. */
			snprintf(l->nics[k - 1].name, sizeof(l->nics[0].name), "?");
			l->nics[k - 1].mbps = 0;
			break;
		}
		snprintf(l->nics[k].name, sizeof(l->nics[0].name), "%s", name);
		for (i = 0; i < r->ib.nspeed; i++)
			if (!strcmp(r->ib.speed[i].name, name))
				l->nics[k].mbps = r->ib.speed[i].mbps;
		k++;
	}
}

static void finish(struct reader *r)
{
	if (r->len || r->bad)
		end_line(r, false);
	join_nics(r);
}

void gdrb_nccl_links_init(struct gdrb_nccl_links *l)
{
	memset(l, 0, sizeof(*l));
	l->ring_gdr = -1;
	l->ring_pxn = -1;
}

void gdrb_nccl_log_parse_mem(const void *data, size_t len, const struct gdrb_nccl_owner *who,
			     struct gdrb_nccl_links *l)
{
	struct reader r = { .l = l, .who = who };

	feed(&r, data, len);
	finish(&r);
}

int gdrb_nccl_log_parse(FILE *f, const struct gdrb_nccl_owner *who, struct gdrb_nccl_links *l)
{
	struct reader r = { .l = l, .who = who };
	char chunk[16384];
	size_t got;

	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		feed(&r, chunk, got);
	finish(&r);
	return ferror(f) ? -EIO : 0;
}

/*
 * Reads path from byte *from to its size when opened (at most GDRB_NCCL_LOG_MAX bytes in
 * all) into r; *from then ends the last complete line read, where the next read starts.
 */
static int read_file(const char *path, struct reader *r, long long *from, char *why, size_t why_len)
{
	struct stat st;
	char chunk[16384];
	off_t left;
	int fd, rc = 0;

	/* O_NONBLOCK: a FIFO planted in its place must not hang the open. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, why_len, "NCCL log %s: %s%s", path, strerror(-rc),
			 rc == -ELOOP ? " (a symbolic link: not followed)" : "");
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "NCCL log %s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_size > GDRB_NCCL_LOG_MAX) {
		snprintf(why, why_len, "NCCL log %s: %lld bytes, more than the %d read back (NCCL_DEBUG_SUBSYS beyond INIT,NET?)",
			 path, (long long)st.st_size, GDRB_NCCL_LOG_MAX);
		close(fd);
		return -EFBIG;
	}
	if (*from < 0 || *from > (long long)st.st_size)
		*from = 0;      /* truncated since, or a new file: from its start */
	if (*from && lseek(fd, (off_t)*from, SEEK_SET) < 0) {
		snprintf(why, why_len, "NCCL log %s: cannot seek: %s", path, strerror(errno));
		close(fd);
		return -EIO;
	}
	/* What the file held when it was looked at: NCCL may still be writing to it. */
	for (left = st.st_size - (off_t)*from; left > 0;) {
		ssize_t got = read(fd, chunk, left < (off_t)sizeof(chunk) ? (size_t)left : sizeof(chunk));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? -EIO : 0;
			break;
		}
		feed(r, chunk, (size_t)got);
		left -= got;
	}
	close(fd);
	if (rc)
		snprintf(why, why_len, "NCCL log %s: read error", path);
	return rc;
}

int gdrb_nccl_log_read(const char *path, const struct gdrb_nccl_owner *who, struct gdrb_nccl_links *l,
		       char *why, size_t why_len)
{
	struct reader r = { .l = l, .who = who };
	long long from = 0;
	int rc;

	gdrb_nccl_links_init(l);
	rc = read_file(path, &r, &from, why, why_len);
	if (!rc || rc == -EIO)
		finish(&r);
	return rc;
}

void gdrb_nccl_tuning_init(struct gdrb_nccl_tuning *t)
{
	memset(t, 0, sizeof(*t));
}

void gdrb_nccl_tuning_parse_mem(const void *data, size_t len, const struct gdrb_nccl_owner *who,
				struct gdrb_nccl_tuning *t)
{
	struct gdrb_nccl_links scratch;
	struct reader r = { .l = &scratch, .t = t, .who = who };

	gdrb_nccl_links_init(&scratch);
	feed(&r, data, len);
	finish(&r);
}

int gdrb_nccl_tuning_read(const char *path, const struct gdrb_nccl_owner *who, long long *from,
			  struct gdrb_nccl_tuning *t, char *why, size_t why_len)
{
	struct gdrb_nccl_links scratch;
	struct reader r = { .l = &scratch, .t = t, .who = who };
	long long start = *from;
	int rc;

	gdrb_nccl_links_init(&scratch);
	rc = read_file(path, &r, from, why, why_len);
	/* A line NCCL is still writing is read next time, whole. */
	if (!rc)
		*from += (long long)r.done;
	else
		*from = start;
	return rc;
}

void gdrb_nccl_links_add(struct gdrb_nccl_links *sum, const struct gdrb_nccl_links *one)
{
	sum->net = sat_add(sum->net, one->net);
	sum->net_gdr = sat_add(sum->net_gdr, one->net_gdr);
	sum->net_pxn = sat_add(sum->net_pxn, one->net_pxn);
	sum->collnet = sat_add(sum->collnet, one->collnet);
	sum->collnet_gdr = sat_add(sum->collnet_gdr, one->collnet_gdr);
	sum->p2p = sat_add(sum->p2p, one->p2p);
	sum->shm = sat_add(sum->shm, one->shm);
	sum->other = sat_add(sum->other, one->other);
	sum->nvls = sat_add(sum->nvls, one->nvls);
	sum->unparsed = sat_add(sum->unparsed, one->unparsed);
	sum->rings = sat_add(sum->rings, one->rings);
	sum->lines = sat_add(sum->lines, one->lines);
	sum->skipped = sat_add(sum->skipped, one->skipped);
	sum->foreign = sat_add(sum->foreign, one->foreign);
	if (one->ring_gdr >= 0 && (sum->ring_gdr < 0 || one->ring_gdr < sum->ring_gdr))
		sum->ring_gdr = one->ring_gdr;
	if (one->ring_pxn > sum->ring_pxn)
		sum->ring_pxn = one->ring_pxn;
	set_merge(sum->nets, sizeof(sum->nets), one->nets);
	set_merge(sum->collnets, sizeof(sum->collnets), one->collnets);
	set_merge(sum->others, sizeof(sum->others), one->others);
	if (!sum->version[0])
		memcpy(sum->version, one->version, sizeof(sum->version));
	else if (one->version[0] && strcmp(sum->version, one->version) != 0)
		snprintf(sum->version, sizeof(sum->version), "mixed");
}

/* A terminated text of its field's characters ("+" joins names), no empty name. */
static bool wire_text(const char *s, size_t size, bool (*ok)(char), bool joined)
{
	const char *nul = memchr(s, '\0', size);
	size_t i;

	if (!nul)
		return false;
	for (i = 0; s + i < nul; i++) {
		if (joined && s[i] == '+') {
			if (i == 0 || s[i + 1] == '+' || s[i + 1] == '\0')
				return false;
		} else if (!ok(s[i])) {
			return false;
		}
	}
	return true;
}

/* A NIC's name: a device name, ':' before its port, '+' joining a merged one, "?" unnamed. */
static bool nic_char(char c)
{
	return name_char(c) || c == ':' || c == '+' || c == '?';
}

int gdrb_nccl_links_from_wire(struct gdrb_nccl_links *l, const void *buf, size_t len)
{
	struct gdrb_nccl_links w;
	unsigned i;

	if (len != sizeof(w))
		return -EINVAL;
	memcpy(&w, buf, sizeof(w));
	if (w.net_gdr > w.net || w.net_pxn > w.net || w.collnet_gdr > w.collnet ||
	    w.skipped > w.lines || w.foreign > w.lines || w.ring_gdr < -1 || w.ring_gdr > 1 || w.ring_pxn < -1 ||
	    w.ring_pxn > 1)
		return -EINVAL;
	if (!wire_text(w.nets, sizeof(w.nets), name_char, true) ||
	    !wire_text(w.collnets, sizeof(w.collnets), name_char, true) ||
	    !wire_text(w.others, sizeof(w.others), name_char, true) ||
	    !wire_text(w.version, sizeof(w.version), version_char, false))
		return -EINVAL;
	for (i = 0; i < GDRB_NCCL_NICS; i++)
		if (!wire_text(w.nics[i].name, sizeof(w.nics[i].name), nic_char, false))
			return -EINVAL;
	for (i = 0; i < GDRB_NCCL_NICS; i++)
		memset(w.nics[i].name + strlen(w.nics[i].name), 0, sizeof(w.nics[i].name) - strlen(w.nics[i].name));
	/* Bytes after a terminator are not looked at again: clear them. */
	memset(w.nets + strlen(w.nets), 0, sizeof(w.nets) - strlen(w.nets));
	memset(w.collnets + strlen(w.collnets), 0, sizeof(w.collnets) - strlen(w.collnets));
	memset(w.others + strlen(w.others), 0, sizeof(w.others) - strlen(w.others));
	memset(w.version + strlen(w.version), 0, sizeof(w.version) - strlen(w.version));
	*l = w;
	return 0;
}

/* Appends prefix and token (n bytes of it) to buf, "+" first if buf is not empty. */
static void append(char *buf, size_t len, const char *prefix, const char *token, int n)
{
	size_t have = strlen(buf);

	snprintf(buf + have, len - have, "%s%s%.*s", have ? "+" : "", prefix, n, token);
}

/* Appends every name of the "+"-joined set, each after prefix. */
static void append_set(char *buf, size_t len, const char *prefix, const char *set)
{
	const char *p = set;

	while (*p) {
		const char *end = strchr(p, '+');

		append(buf, len, prefix, p, end ? (int)(end - p) : (int)strlen(p));
		if (!end)
			break;
		p = end + 1;
	}
}

void gdrb_nccl_transports(const struct gdrb_nccl_links *l, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = '\0';
	if (l->net)
		append_set(buf, len, "NET/", l->nets);
	if (l->collnet)
		append_set(buf, len, "COLLNET/", l->collnets);
	if (l->nvls)
		append(buf, len, "", "NVLS", 4);
	if (l->p2p)
		append(buf, len, "", "P2P", 3);
	if (l->shm)
		append(buf, len, "", "SHM", 3);
	if (l->other)
		append_set(buf, len, "", l->others);
}

/* Whether the comma-separated list holds name (NCCL compares without case). */
static bool list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncasecmp(p, name, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

bool gdrb_nccl_subsys_has(const char *list, const char *name)
{
	return list_has(list, name);
}

int gdrb_nccl_debug_subsys(const char *user, bool tuning, char *out, size_t len, char *changed, size_t changed_len)
{
	static const char *const need[] = { "INIT", "NET", "TUNING" };
	size_t i, nneed = tuning ? 3 : 2, at = 0;
	int n;

	if (!len || !changed_len)
		return -1;
	out[0] = changed[0] = '\0';
	if (!user) {
		n = snprintf(out, len, "INIT,NET%s", tuning ? ",TUNING" : "");
		return n < 0 || (size_t)n >= len ? -1 : 0;
	}
	if (user[0] == '^') {
		/* Everything but the list: what is needed leaves the list. */
		const char *p = user + 1;

		n = snprintf(out, len, "^");
		at = 1;
		while (*p) {
			size_t tl = strcspn(p, ",");
			bool drop = false;

			for (i = 0; i < nneed; i++)
				if (strlen(need[i]) == tl && !strncasecmp(p, need[i], tl))
					drop = true;
			if (drop) {
				size_t have = strlen(changed);

				snprintf(changed + have, changed_len - have, "%s%.*s", have ? "," : "", (int)tl, p);
			} else if (tl) {
				n = snprintf(out + at, len - at, "%s%.*s", at > 1 ? "," : "", (int)tl, p);
				if (n < 0 || (size_t)n >= len - at)
					return -1;
				at += (size_t)n;
			}
			p += tl + (p[tl] == ',');
		}
		if (at == 1)
			snprintf(out, len, "ALL");
		return 0;
	}
	n = snprintf(out, len, "%s", user);
	if (n < 0 || (size_t)n >= len)
		return -1;
	at = (size_t)n;
	if (list_has(user, "ALL"))
		return 0;
	for (i = 0; i < nneed; i++) {
		if (list_has(user, need[i]))
			continue;
		n = snprintf(out + at, len - at, "%s%s", at ? "," : "", need[i]);
		if (n < 0 || (size_t)n >= len - at)
			return -1;
		at += (size_t)n;
		snprintf(changed + strlen(changed), changed_len - strlen(changed), "%s%s", changed[0] ? "," : "", need[i]);
	}
	return 0;
}
