/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One line of NCCL's INFO log (nccl_log_int.h). The lines the reader understands, after
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

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nccl_log_int.h"

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
	gdrb_nccl_set_add(l->nets, sizeof(l->nets), name, (size_t)(slash - name));
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
	gdrb_nccl_set_add(l->others, sizeof(l->others), s, (size_t)(end - s));
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
	gdrb_nccl_set_add(l->collnets, sizeof(l->collnets), name, (size_t)(slash - name));
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
		l->version[i] = gdrb_nccl_version_char(s[i]) ? s[i] : '_';
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
			gdrb_nccl_set_add(set, size, names[i], strlen(names[i]));
			return;
		}
	}
	gdrb_nccl_set_add(set, size, s, n);
}

static size_t word_len(const char *s)
{
	size_t n = 0;

	while (gdrb_nccl_name_char(s[n]))
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
		gdrb_nccl_set_add(t->algos, sizeof(t->algos), "Symmetric", 9);
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
		if (!gdrb_nccl_name_char(name[i]) && name[i] != '+')
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

void gdrb_nccl_log_line(char *line, size_t len, struct gdrb_nccl_links *l, const struct gdrb_nccl_owner *who,
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
