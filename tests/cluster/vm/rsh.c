/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A remote shell between the VMs of a soft-RoCE cluster (rxe-vm.sh run --vms N).
 *
 *     rsh [ssh options] HOST COMMAND...   run COMMAND (its words joined by spaces, as
 *                                         ssh does) with bash -c on HOST; its stdout and
 *                                         stderr come back, its exit status is ours
 *     rsh --serve PORT                    the server every VM runs
 *     rsh --wait SEC HOST...              wait until every HOST's server answers
 *
 * What Open MPI's plm_rsh_agent needs, and no more: no stdin (the command's is
 * /dev/null), no authentication (the VMs reach nothing but each other). When the client
 * goes away (mpirun kills its agent) the command's process group is killed. Exit 255
 * when HOST cannot be reached, as ssh. In C because an emulated VM starts a Python
 * interpreter in about 10 s, and mpirun starts one client per remote daemon.
 *
 * The protocol: the client sends "ping\n", or "run LEN\n" and LEN bytes of command; the
 * server answers with frames of one channel byte (1 stdout, 2 stderr, 3 exit status as
 * decimal text, the last frame) and a 4-byte big-endian length, then the data.
 * rxe-vm.sh compiles this file with the host's cc and copies the binary into each VM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { CH_OUT = 1, CH_ERR = 2, CH_RC = 3 };
#define PORT "7070"
#define MAX_CMD (1u << 20)

/* All of LEN bytes written (writing) or read: 0, or -1 on an error or the end of the stream. */
static int xfer_all(int fd, char *p, size_t len, int writing)
{
	while (len > 0) {
		ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	return xfer_all(fd, (char *)(uintptr_t)buf, len, 1);
}

static int read_all(int fd, void *buf, size_t len)
{
	return xfer_all(fd, buf, len, 0);
}

static int send_frame(int sock, int chan, const void *data, uint32_t len)
{
	unsigned char head[5] = { (unsigned char)chan, (unsigned char)(len >> 24), (unsigned char)(len >> 16),
				  (unsigned char)(len >> 8), (unsigned char)len };

	return write_all(sock, head, sizeof(head)) || write_all(sock, data, len) ? -1 : 0;
}

/* One line from the socket, byte by byte (the request line is short): 0, or -1. */
static int read_line(int sock, char *buf, size_t len)
{
	size_t i = 0;

	while (i + 1 < len) {
		if (read_all(sock, buf + i, 1))
			return -1;
		if (buf[i] == '\n') {
			buf[i] = '\0';
			return 0;
		}
		i++;
	}
	return -1;
}

/* Serve one connection in its own process: run the command, relay its output. */
static void serve_one(int sock)
{
	char line[64], *cmd, buf[1 << 16], rc_text[16];
	int out[2], err[2], status = 0, open_pipes = 2;
	unsigned long len;
	pid_t pid;

	if (read_line(sock, line, sizeof(line)))
		_exit(1);
	if (strcmp(line, "ping") == 0)
		_exit(send_frame(sock, CH_RC, "0", 1) ? 1 : 0);
	if (sscanf(line, "run %lu", &len) != 1 || len > MAX_CMD)
		_exit(1);
	cmd = malloc(len + 1);
	if (!cmd || read_all(sock, cmd, len))
		_exit(1);
	cmd[len] = '\0';
	if (pipe(out) || pipe(err))
		_exit(1);
	pid = fork();
	if (pid < 0)
		_exit(1);
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		setsid();
		if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(127);
		close(null);
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		close(sock);
		execlp("bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	/* Relay both pipes until they close; the client closing first kills the command. */
	while (open_pipes > 0) {
		struct pollfd p[3] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 }, { sock, POLLIN, 0 } };
		int i;

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[2].revents) {
			kill(-pid, SIGKILL);
			_exit(1);
		}
		for (i = 0; i < 2; i++) {
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n > 0) {
				if (send_frame(sock, i == 0 ? CH_OUT : CH_ERR, buf, (uint32_t)n)) {
					kill(-pid, SIGKILL);
					_exit(1);
				}
			} else if (n == 0 || errno != EINTR) {
				close(p[i].fd);
				if (i == 0)
					out[0] = -1;
				else
					err[0] = -1;
				open_pipes--;
			}
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	snprintf(rc_text, sizeof(rc_text), "%d",
		 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	send_frame(sock, CH_RC, rc_text, (uint32_t)strlen(rc_text));
	shutdown(sock, SHUT_RDWR);
	_exit(0);
}

static int serve(const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;
	int lsock, one = 1;

	signal(SIGCHLD, SIG_IGN);       /* no zombies: the connections' processes reap themselves */
	if (getaddrinfo(NULL, port, &hints, &ai)) {
		fprintf(stderr, "rsh: --serve %s: not a port\n", port);
		return 2;
	}
	lsock = socket(ai->ai_family, ai->ai_socktype, 0);
	if (lsock < 0 || setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lsock, ai->ai_addr, ai->ai_addrlen) || listen(lsock, 64)) {
		perror("rsh: --serve");
		return 1;
	}
	freeaddrinfo(ai);
	for (;;) {
		int sock = accept(lsock, NULL, NULL);

		if (sock < 0)
			continue;
		if (fork() == 0) {
			close(lsock);
			signal(SIGCHLD, SIG_DFL);
			serve_one(sock);
		}
		close(sock);
	}
}

static int connect_to(const char *host)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int sock;

	if (getaddrinfo(host, PORT, &hints, &ai))
		return -1;
	sock = socket(ai->ai_family, ai->ai_socktype, 0);
	if (sock >= 0 && connect(sock, ai->ai_addr, ai->ai_addrlen)) {
		close(sock);
		sock = -1;
	}
	freeaddrinfo(ai);
	return sock;
}

/* Read one frame's header: its channel and length, or -1 at the end of the stream. */
static int read_frame_head(int sock, int *chan, uint32_t *len)
{
	unsigned char head[5];

	if (read_all(sock, head, sizeof(head)))
		return -1;
	*chan = head[0];
	*len = (uint32_t)head[1] << 24 | (uint32_t)head[2] << 16 | (uint32_t)head[3] << 8 | head[4];
	return 0;
}

static int ping(const char *host)
{
	char rc[2];
	uint32_t len;
	int sock = connect_to(host), chan, ok;

	if (sock < 0)
		return 0;
	ok = !write_all(sock, "ping\n", 5) && !read_frame_head(sock, &chan, &len) && chan == CH_RC && len == 1 &&
	     !read_all(sock, rc, 1) && rc[0] == '0';
	close(sock);
	return ok;
}

static int wait_for(double limit, char **hosts, int n)
{
	struct timespec t0, t;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		while (!ping(hosts[i])) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > limit) {
				fprintf(stderr, "rsh: %s did not answer within %g s\n", hosts[i], limit);
				return 1;
			}
			usleep(500000);
		}
	}
	return 0;
}

static int run(const char *host, char **words, int n)
{
	size_t len = 0, at = 0;
	char head[32], *cmd, buf[1 << 16];
	int sock, i, chan;
	uint32_t flen;

	for (i = 0; i < n; i++)
		len += strlen(words[i]) + 1;
	cmd = malloc(len);
	if (!cmd || len > MAX_CMD) {
		fprintf(stderr, "rsh: command too long\n");
		return 255;
	}
	for (i = 0; i < n; i++) {
		size_t w = strlen(words[i]);

		memcpy(cmd + at, words[i], w);
		at += w;
		cmd[at++] = i + 1 < n ? ' ' : '\0';
	}
	sock = connect_to(host);
	if (sock < 0) {
		fprintf(stderr, "rsh: %s: cannot connect to its port %s\n", host, PORT);
		return 255;
	}
	snprintf(head, sizeof(head), "run %zu\n", at - 1);
	if (write_all(sock, head, strlen(head)) || write_all(sock, cmd, at - 1)) {
		fprintf(stderr, "rsh: %s: connection lost\n", host);
		return 255;
	}
	while (!read_frame_head(sock, &chan, &flen)) {
		uint32_t left = flen;

		if (chan == CH_RC) {
			char rc[16] = "";

			if (flen >= sizeof(rc) || read_all(sock, rc, flen))
				break;
			return atoi(rc);
		}
		while (left > 0) {
			uint32_t part = left < sizeof(buf) ? left : (uint32_t)sizeof(buf);

			if (read_all(sock, buf, part))
				goto lost;
			/* A closed stdout or stderr here is no reason to stop relaying the other. */
			(void)write_all(chan == CH_OUT ? 1 : 2, buf, part);
			left -= part;
		}
	}
lost:
	fprintf(stderr, "rsh: %s: connection lost\n", host);
	return 255;
}

int main(int argc, char **argv)
{
	int i = 1;

	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && strcmp(argv[1], "--serve") == 0)
		return serve(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "--wait") == 0)
		return wait_for(atof(argv[2]), argv + 3, argc - 3);
	/* ssh options Open MPI may pass (-x, -o X, ...): none apply here. */
	while (i < argc && argv[i][0] == '-') {
		const char *o = argv[i];

		i += (strcmp(o, "-o") == 0 || strcmp(o, "-l") == 0 || strcmp(o, "-p") == 0 || strcmp(o, "-i") == 0)
			     ? 2 : 1;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: rsh HOST COMMAND... | --serve PORT | --wait SEC HOST...\n");
		return 255;
	}
	return run(argv[i], argv + i + 1, argc - i - 1);
}
