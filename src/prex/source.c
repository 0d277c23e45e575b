// SPDX-License-Identifier: BSD-2-Clause
/*
 * The input stack.  stdin is at the bottom; `source FILE` and the control
 * files push on top of it, and a file's end pops back to what was below.
 * At start-up ./.prexrc and then $HOME/.prexrc are pushed, so the one in
 * $HOME is read first, then the one in the current directory, then the
 * user's input.  The end of stdin acts as `quit` when it is not a terminal
 * and as an empty line when it is.  Messages about a line name its source
 * and line number: "<STDIN>", line 3: ...
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prex.h"

#define STDIN_NAME "<STDIN>"
#define MAX_DEPTH  64 /* `source` nesting; a file sourcing itself stops here */

struct source {
	char *name;
	FILE *fp;
	int line; /* of the next line to read */
	bool tty;
	bool ended; /* a line or command over LINE_MAX_BYTES: nothing more is read from it */
};

static struct source stack[MAX_DEPTH];
static int depth;
static bool editing; /* libedit reads stdin */
static char cur_name[PATH_MAX + 8] = STDIN_NAME;
static int cur_line;

/*
 * One message line on stderr, in one write(): the target shares stderr (a
 * terminal, a pipe) and writes its own lines there, so a message written a
 * piece at a time (stderr is unbuffered: one write() per stdio call) could
 * have a line of the target's land in its middle.  stdout is flushed first,
 * so that what prex printed there before comes out before the message.
 */
static void vmsg_line(const char *prefix, const char *fmt, va_list ap)
{
	char small[1024], *buf = small;
	size_t len;
	va_list ap2;
	int n, m;

	fflush(stdout);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	len = strlen(prefix) + (size_t)n + 1;
	if (len + 1 > sizeof(small) && !(buf = malloc(len + 1)))
		return;
	m = snprintf(buf, len + 1, "%s", prefix);
	vsnprintf(buf + m, len + 1 - m, fmt, ap);
	buf[len - 1] = '\n';
	buf[len] = '\0';
	flockfile(stderr); /* after what another thread is printing with stdio */
	for (size_t off = 0; off < len;) {
		ssize_t w = write(STDERR_FILENO, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += w;
	}
	funlockfile(stderr);
	if (buf != small)
		free(buf);
}

void prex_msg(const char *fmt, ...)
{
	char prefix[PATH_MAX + 8];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s: ", g_opt.argv0);
	va_start(ap, fmt);
	vmsg_line(prefix, fmt, ap);
	va_end(ap);
}

void semantic_error(const char *fmt, ...)
{
	char prefix[PATH_MAX + 64];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "\"%s\", line %d: semantic error: ", cur_name, cur_line);
	va_start(ap, fmt);
	vmsg_line(prefix, fmt, ap);
	va_end(ap);
}

void syntax_error(int line, const char *tok)
{
	fflush(stdout);
	fprintf(stderr, "\"%s\", line %d: syntax error on or before \"%s\"\n", cur_name, line, tok);
}

bool source_full(void)
{
	return depth == MAX_DEPTH;
}

const char *source_name(void)
{
	return cur_name;
}

void source_set_line(int line)
{
	cur_line = line;
}

bool source_is_tty(void)
{
	return depth > 0 && stack[depth - 1].tty;
}

int source_push(const char *path)
{
	struct source *s;
	struct stat st;
	FILE *fp;

	if (depth == MAX_DEPTH) {
		errno = ELOOP;
		return -1;
	}
	fp = fopen(path, "re");
	if (!fp)
		return -1;
	/* fopen() opens a directory; reading it would fail as a silent EOF */
	if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(fp);
		errno = EISDIR;
		return -1;
	}
	s = &stack[depth++];
	s->name = strdup(path);
	s->fp = fp;
	s->line = 1;
	s->tty = isatty(fileno(fp));
	if (!s->name) {
		perror("prex");
		exit(1);
	}
	return 0;
}

void source_init(void)
{
	const char *home = getenv("HOME");
	struct stat here, st;
	bool have_here;
	char path[PATH_MAX];

	stack[0].name = strdup(STDIN_NAME);
	stack[0].fp = stdin;
	stack[0].line = 1;
	stack[0].tty = isatty(STDIN_FILENO);
	depth = 1;
	if (stack[0].tty)
		editing = edit_init() == 0;

	/* a stack: pushed last is read first */
	have_here = stat(".prexrc", &here) == 0;
	if (have_here && source_push(".prexrc"))
		prex_msg("cannot read .prexrc: %s", strerror(errno));
	if (home && *home && snprintf(path, sizeof(path), "%s/.prexrc", home) < (int)sizeof(path) &&
	    stat(path, &st) == 0) {
		/* $HOME is the current directory: the same file, read once */
		if (have_here && st.st_dev == here.st_dev && st.st_ino == here.st_ino)
			return;
		if (source_push(path))
			prex_msg("cannot read %s: %s", path, strerror(errno));
	}
}

static void pop(void)
{
	struct source *s = &stack[--depth];

	fclose(s->fp);
	free(s->name);
}

/*
 * Longer lines, and longer commands joined by backslash-newlines, end
 * their source: reading on would grow without bound (/dev/zero).
 */
#define LINE_MAX_BYTES (1 << 20)

/*
 * One physical line with its '\n' (added at a file's end), NULL at EOF;
 * *nul tells whether it held a NUL byte.
 */
static char *read_physical(struct source *s, bool continued, bool *nul)
{
	char *line = NULL, prompt[PATH_MAX + 4];
	size_t len = 0, cap = 0;
	int c;

	*nul = false;
	if (prex_term_signal())
		prex_quit(TNFCTL_TARG_DEFAULT);
	if (s->ended)
		return NULL;
	if (s->fp == stdin && editing) {
		snprintf(prompt, sizeof(prompt), "%s> ", g_opt.argv0);
		return edit_getline(continued ? "" : prompt);
	}
	/* a byte at a time (stdio buffers): getline would not stop at a cap */
	for (;;) {
		errno = 0;
		c = getc(s->fp);
		if (c != EOF) {
			if (len == LINE_MAX_BYTES) {
				prex_msg("%s: line %d is longer than %d bytes: the rest of it "
					 "is not read",
					 s->name, s->line, LINE_MAX_BYTES);
				s->ended = true;
				free(line);
				return NULL;
			}
			if (len + 2 >= cap) {
				char *nl = realloc(line, cap = cap ? cap * 2 : 256);

				if (!nl) {
					perror("prex");
					exit(1);
				}
				line = nl;
			}
			line[len++] = (char)c;
			if (c == '\n')
				break;
			continue;
		}
		/*
		 * A SIGINT at the prompt interrupts the read, maybe in the middle
		 * of a line.  Keep what came and read on: the error flag would
		 * make every later read fail, ending prex as if at EOF, and the
		 * part alone is not the command that was sent.
		 */
		if (ferror(s->fp) && errno == EINTR) {
			if (prex_term_signal())
				prex_quit(TNFCTL_TARG_DEFAULT);
			clearerr(s->fp);
			continue;
		}
		if (ferror(s->fp) && !len && errno) {
			/* e.g. EIO; EISDIR cannot happen, source_push refuses dirs */
			prex_msg("error reading %s: %s", s->name, strerror(errno));
		}
		break;
	}
	if (line)
		line[len] = '\0';
	if (!len) {
		free(line);
		return NULL;
	}
	/*
	 * The lexer works on C strings: a NUL would silently cut the line
	 * short (`quit\0 resume` read as `quit`).  Blank them out and let
	 * the caller reject the statement.
	 */
	if (memchr(line, '\0', len)) {
		size_t i;

		*nul = true;
		for (i = 0; i < len; i++)
			if (!line[i])
				line[i] = ' ';
	}
	if (line[len - 1] != '\n') {
		line[len] = '\n';
		line[len + 1] = '\0';
	}
	return line;
}

/*
 * True if physical line @l has a '#' comment: one outside a 'string' and a
 * /regex/ (each closed on the line, as the lexer takes them).  Its trailing
 * backslash is part of the comment, as in the original: no continuation.
 */
static bool has_comment(const char *l)
{
	const char *p, *q;

	for (p = l; *p && *p != '\n'; p++) {
		if (*p == '#')
			return true;
		q = *p == '\'' ? lex_string_end(p) : *p == '/' ? lex_regex_end(p) : NULL;
		if (q)
			p = q;
	}
	return false;
}

int source_read(char **text, int *first_line)
{
	char *acc = NULL;
	size_t len = 0, cap = 0;
	int nul_line = 0;

	for (;;) {
		struct source *s = &stack[depth - 1];
		bool nul, cont;
		char *line = read_physical(s, acc != NULL, &nul);
		size_t n;

		if (!line) {
			/* a terminal over the cap ends too: its "empty lines" would never stop */
			if (depth == 1 && (!s->tty || s->ended)) {
				if (acc) /* the last line ended in a backslash */
					break;
				return 0;
			}
			if (depth == 1) {
				/* ^D on the terminal is an empty line */
				fputc('\n', stdout);
				line = strdup("\n");
			} else {
				pop();
				if (acc)
					break;
				continue;
			}
		}
		if (!acc) {
			snprintf(cur_name, sizeof(cur_name), "%s", s->name);
			*first_line = s->line;
		}
		if (nul && !nul_line)
			nul_line = s->line;
		s->line++;
		n = strlen(line);
		/* the cap holds for the joined lines too: `yes '\'` is one endless command */
		if (len + n > LINE_MAX_BYTES) {
			prex_msg("%s: the command of line %d is continued past %d bytes: the "
				 "rest of it is not read",
				 s->name, *first_line, LINE_MAX_BYTES);
			s->ended = true;
			free(line);
			free(acc);
			acc = NULL;
			len = cap = 0;
			nul_line = 0;
			continue;
		}
		/* doubling: a realloc per joined line copies the whole command each time */
		if (len + n + 1 > cap) {
			size_t c = cap ? cap : 256;

			while (c < len + n + 1)
				c *= 2;
			acc = realloc(acc, c);
			if (!acc) {
				perror("prex");
				exit(1);
			}
			cap = c;
		}
		memcpy(acc + len, line, n + 1);
		/* backslash-newline continues the statement on the next line */
		cont = len + n >= 2 && acc[len + n - 2] == '\\' && acc[len + n - 1] == '\n' &&
		       !has_comment(acc + len);
		len += n;
		free(line);
		if (cont)
			continue;
		break;
	}
	if (len == 0 || acc[len - 1] != '\n') {
		acc = realloc(acc, len + 2);
		if (!acc) {
			perror("prex");
			exit(1);
		}
		acc[len++] = '\n';
		acc[len] = '\0';
	}
	if (nul_line) {
		/* a NUL is no token: the statement fails as on an INVAL one */
		syntax_error(nul_line, "\\0");
		acc[0] = '\n';
		acc[1] = '\0';
	}
	*text = acc;
	return 1;
}
