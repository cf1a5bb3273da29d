/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NCCL's configuration files, read as NCCL reads them (src/misc/param.cc, setEnvFile
 * and initEnv/initEnvFunc): NCCL_CONF_FILE where it is set and not empty (NCCL 2.23 on),
 * else $HOME/.nccl.conf; then /etc/nccl.conf. Each line NAME=VALUE is a setenv(NAME,
 * VALUE, 0): a variable already in the environment wins over a file, and the first file
 * over the second. gdrbench reads them on rank 0, as untrusted text, to show in the
 * header which NCCL_* settings came from which file and which the environment
 * overrides, and to reason about those in force (NCCL_ALGO, NCCL_NET_GDR_LEVEL...)
 * as NCCL will. Plain C: no NCCL, so the reader runs where NCCL is not built.
 */
#ifndef GDRB_NCCL_ENV_H
#define GDRB_NCCL_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* A larger file is not read (bytes): NCCL's are a few lines. */
#define GDRB_NCCL_CONF_MAX (64 << 10)
/* NCCL_* settings kept over both files. */
#define GDRB_NCCL_CONF_SETTINGS 48

struct gdrb_nccl_conf_file {
	char path[256];         /* as NCCL builds it ("" where NCCL reads none here) */
	const char *via;        /* "NCCL_CONF_FILE", "~/.nccl.conf", "/etc/nccl.conf" */
	bool read;              /* read; otherwise state says why not */
	char state[128];        /* "not there", "a symbolic link (not followed)"... */
	unsigned settings;      /* NAME=VALUE lines NCCL sets (any name) */
	unsigned others;        /* of those, names that are not NCCL_* */
	unsigned ignored;       /* lines NCCL passes over: no '=', an empty name, a comment */
	unsigned blank_names;   /* NAME with a blank or tab: NCCL sets a variable it never reads */
};

struct gdrb_nccl_conf_setting {
	char name[64];
	char value[160];        /* raw; long values cut (cut true): never reasoned about */
	bool cut;
	int file;               /* index in files */
	bool shadowed;          /* an earlier line or file set it already: NCCL keeps that one */
};

struct gdrb_nccl_conf {
	struct gdrb_nccl_conf_file files[2];
	int nfiles;
	struct gdrb_nccl_conf_setting set[GDRB_NCCL_CONF_SETTINGS];
	int nset;
	unsigned dropped;       /* NCCL_* settings past GDRB_NCCL_CONF_SETTINGS */
	char conf_file_note[160]; /* NCCL_CONF_FILE set but not read by this NCCL (before 2.23) */
};

/*
 * Read NCCL's files as NCCL of version (NCCL_VERSION_CODE; 0 unknown: the newest rules)
 * would: conf_file the environment's NCCL_CONF_FILE, home its HOME (NULL: unset), etc
 * the path of /etc/nccl.conf (a test hook may move it). A link, FIFO, folder, device, an
 * unreadable or larger file is named in its state and never followed, waited on or read.
 */
void gdrb_nccl_conf_read(struct gdrb_nccl_conf *conf, int version, const char *conf_file, const char *home,
			 const char *etc);

/* Parse one file's text (len bytes) into conf as file index file (its lines NCCL's way). */
void gdrb_nccl_conf_parse(struct gdrb_nccl_conf *conf, int file, const char *text, size_t len);

/* The value a file gives name (the one NCCL keeps), and in *from the file's path; NULL none. */
const char *gdrb_nccl_conf_value(const struct gdrb_nccl_conf *conf, const char *name, const char **from);

/*
 * The header's lines on the files (each after "# "), naming each setting, the file it
 * came from and whether the environment overrides it (getenv at the call: after
 * gdrbench set its own variables).
 */
void gdrb_nccl_conf_describe(const struct gdrb_nccl_conf *conf, char *buf, size_t len);

/*
 * For the rows' note: the files' NCCL_* settings in force (not in the environment), as
 * "from FILE: NAME=VALUE ..." groups, "; " between them; values cleaned, ';' and blanks
 * made '_'. "" none.
 */
void gdrb_nccl_conf_note(const struct gdrb_nccl_conf *conf, char *buf, size_t len);

#endif
