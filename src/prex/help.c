// SPDX-License-Identifier: BSD-2-Clause
/*
 * help, help <command>, help <topic>.  The texts are written for this
 * implementation (Linux, libtnfctl for Linux).
 */
#include <string.h>

#include "prex.h"

struct help {
	const char *word;
	const char *text;
};

static const struct help commands[] = {
	{"buffer", "buffer [alloc [size] | dealloc]\n"
		   "\tKernel mode only (prex -k): show, allocate or free the kernel\n"
		   "\ttrace buffer.  Its trace file is the -o file, else\n"
		   "\t$TMPDIR/ktrace-<prex's pid>.  The size (e.g. 2m) defaults to -s,\n"
		   "\telse 384k; below the minimum (128k) it is raised to it.  dealloc\n"
		   "\tneeds ktrace off, and leaves the file complete.\n"},
	{"clear", "clear $set | selectors\n"
		  "\tDisconnect every function connected to the selected probes.\n"},
	{"connect", "connect &function $set | selectors\n"
		    "\tMake the selected probes call the function each time they fire,\n"
		    "\tbefore the event is recorded.  Does not enable them.  &debug\n"
		    "\t(tnf_probe_debug) prints each firing on the target's stderr.\n"
		    "\tNot in kernel mode: kernel probes have no functions.\n"},
	{"continue", "continue\n"
		     "\tResume the target.  Press ^C (SIGINT) to stop it again and get\n"
		     "\tthe prompt back.  prex ends when the target exits.  Ignored in\n"
		     "\tkernel mode: the kernel never stops.\n"},
	{"create", "create $set selectors\n"
		   "\tDefine (or redefine) the set $set as the selector list.\n"
		   "create &function symbol\n"
		   "\tDefine &function as an alias of the target symbol (a function\n"
		   "\tin any loaded object), for connect.\n"},
	{"disable", "disable $set | selectors\n"
		    "\tStop the selected probes from firing.\n"},
	{"enable", "enable $set | selectors\n"
		   "\tMake the selected probes fire (and, if traced, record events).\n"},
	{"help", "help [command | topic]\n"
		 "\tWithout argument: the list of commands and topics.\n"},
	{"ktrace", "ktrace [on | off]\n"
		   "\tKernel mode only: show or switch kernel tracing, the master\n"
		   "\tswitch: enabled and traced kernel probes record events only while\n"
		   "\tit is on.  Turning it on needs a buffer.\n"},
	{"list", "list probes $set | selectors\n"
		 "list specs probes $set | selectors\n"
		 "\tOne line per selected probe with attr=value for the attributes\n"
		 "\tthe specs name (default: name enable trace file line funcs).\n"
		 "list values specs\n"
		 "\tEvery value of the attributes the specs name, over all probes.\n"
		 "list sets | fcns | history | tracefile\n"
		 "\tThe sets, the function aliases, the probe-control commands so\n"
		 "\tfar (replayed on probes of objects loaded later), the trace file.\n"},
	{"pfilter", "pfilter [on | off | add pids | delete pids]\n"
		    "\tKernel mode only: show the process filter, switch it on or off,\n"
		    "\tor add or delete pids (p1,p2,...).  While it is on, only events\n"
		    "\tof the listed processes are recorded (not their children);\n"
		    "\tpid 0 stands for kernel threads and the idle task.\n"},
	{"quit", "quit [kill | resume | suspend]\n"
		 "\tLeave prex.  Plain quit kills a target prex started and resumes\n"
		 "\tone it attached to; kill, resume and suspend choose.  suspend\n"
		 "\tleaves it stopped, for another controller to attach to.  With\n"
		 "\tprex -f the action applies to every process prex follows.  In\n"
		 "\tkernel mode any quit turns tracing off and completes the file.\n"},
	{"source", "source 'file' | file\n"
		   "\tRead commands from the file, then come back.  Files can nest.\n"},
	{"trace", "trace $set | selectors\n"
		  "\tRecord an event in the trace file when a selected probe fires.\n"},
	{"untrace", "untrace $set | selectors\n"
		    "\tFire the selected probes (and their functions) without\n"
		    "\trecording events.\n"},
	{"usdt", "usdt strings provider name arg[,arg]...\n"
		 "\tRecord these arguments (from 0) of the USDT probe provider:name\n"
		 "\tas C strings, not integers ('*': any provider or name), from\n"
		 "\tits next enable on (TNFCTL_USDT_STRINGS, which it extends).\n"},
};

static const struct help topics[] = {
	{"intro", "prex controls the TNF probes of a process.  It starts the program\n"
		  "(prex cmd args) or attaches to one (prex -p pid), creates its trace file\n"
		  "($TMPDIR/trace-<pid>, or -o file; -s KB sets the size, 4096 KB by\n"
		  "default) and stops it before any of its code has run, so every probe\n"
		  "can be set up first.  Then it reads commands: from $HOME/.prexrc, from\n"
		  "./.prexrc, then from its input.  `continue` lets the target run; ^C\n"
		  "stops it again.  Read the trace file with tnfdump(1).  prex -k controls\n"
		  "the kernel's probes instead (help kernel_mode).\n"
		  "A newline ends a command; a backslash at the end of a line continues\n"
		  "it; # starts a comment.\n"},
	{"functions", "A function alias &name stands for a symbol of the target: create it with\n"
		      "`create &name symbol`, use it with `connect &name selectors`, remove\n"
		      "all functions of probes with `clear`.  &debug (tnf_probe_debug) is\n"
		      "predefined.  In probe lists a connected function shows as &alias when\n"
		      "it has one.  `list fcns` shows the aliases.\n"},
	{"kernel_mode",
	 "prex -k controls the kernel's probes: on Linux, the kernel's tracepoints\n"
	 "(one probe each, named after the event, keys its subsystem, slots its\n"
	 "fields: list probes name=sched_process_fork, enable keys=sched).  It needs\n"
	 "the privileges of BPF tracing (root, or CAP_BPF and CAP_PERFMON).\n"
	 "The kernel never stops: there is no target, continue is ignored, and\n"
	 "connect and clear are refused (kernel probes have no functions).\n"
	 "Events go to a buffer that \"buffer alloc [size]\" makes (384k, or -s) and\n"
	 "that is written to a trace file as they come: the -o file, else\n"
	 "$TMPDIR/ktrace-<prex's pid>; read it with tnfdump(1).  An enabled and\n"
	 "traced probe records events only while the master switch is on:\n"
	 "\"ktrace on\" and \"ktrace off\".  \"pfilter\" limits the events to\n"
	 "those of a set of processes, not their children (pid 0: kernel threads\n"
	 "and the idle task);\n"
	 "prex warns after each command while the filter is on with no pid.\n"
	 "quit (or the end of a script) turns tracing off, writes what is left\n"
	 "and closes the file.\n"
	 "  buffer alloc 2m      enable name=/^sched_process/   trace $all\n"
	 "  pfilter add 1234     pfilter on     ktrace on   ...   ktrace off\n"},
	{"probe_spec", "A selector is attr=value or just value (meaning keys=value).  Each side\n"
		       "is a word, a 'quoted string' (exact match), or a /regular expression/\n"
		       "(ed-style, POSIX basic: \\( \\) group, \\{m,n\\} repeats, \\1 refers\n"
		       "back; ( ) + ? { | are plain characters; it matches anywhere in the\n"
		       "string: use ^ and $ to anchor; write \\/ for a slash).  A list of\n"
		       "selectors selects the probes any one of them matches.  A probe is\n"
		       "matched against\n"
		       "  enable on|off; trace on|off; object <file>; funcs <f>...;\n"
		       "followed by its attributes (name, slots, keys, file, line and its own),\n"
		       "so any of these can be selected on.  A selector matches when an\n"
		       "attribute's name matches the left side and one of its values (blank\n"
		       "separated, a quoted span counts as one) matches the right side.\n"
		       "Reserved words must be quoted: 'trace'=on is not valid, 'trace'='on'\n"
		       "is.  Numbers too: line='42'.\n"},
	{"processes", "prex controls one process, stopped at the prompt and running after\n"
		      "`continue` until ^C (back to the prompt), its exit (prex ends), or an\n"
		      "exec (prex lets the new image run and ends).  Processes it forks run\n"
		      "untraced by prex but keep the probe settings and write into the same\n"
		      "trace file under their own pid.  The target runs in its own process\n"
		      "group; prex never forwards signals to it (use kill(1)).\n"
		      "\n"
		      "With prex -f, every process of the tree is controlled from the one\n"
		      "prompt, each served by its own thread:\n"
		      " - a forked child is stopped at its birth and followed; it writes into\n"
		      "   its parent's trace file, keeps the probe settings it inherited, and\n"
		      "   the whole history is replayed on probes of objects it loads later;\n"
		      " - after an exec the process is re-attached (closed with suspend, then\n"
		      "   attached again) and the whole history is applied to all its probes;\n"
		      " - a process gets a trace file only when a command first selects one\n"
		      "   of its probes: the root's first image the -o file, any other\n"
		      "   <trace file>.<pid> (<trace file>.<pid>.<n> for the n-th file of\n"
		      "   that process); a program without probes gets none;\n"
		      " - commands apply to every process stopped at the prompt; list probes\n"
		      "   and list tracefile show each process under its pid;\n"
		      " - ^C stops every process; quit closes every one with the same action\n"
		      "   (plain quit kills the whole tree when prex started it, resumes it\n"
		      "   when prex attached);\n"
		      " - prex ends when every followed process has ended.\n"
		      "An image without libtnfprobe.so.1 is followed without probes when\n"
		      "libtnfctl can; one that cannot be re-attached is let go with a message.\n"},
	{"set_spec", "A set names a selector list: `create $name selectors`.  Use it wherever\n"
		     "a selector list goes: enable $name.  $all (keys=/.*/) selects every\n"
		     "probe.  A command copies the set when it is typed, so redefining the\n"
		     "set later does not change what the history replays.  `list sets`\n"
		     "shows them.\n"},
};

const char *const help_topics[] = {"intro",	"functions", "kernel_mode", "probe_spec",
				   "processes", "set_spec",  NULL};

/* Every usage line two columns in, as the first; the tabbed text as it is. */
static void print_indented(const char *text)
{
	const char *nl;

	for (; *text; text = nl + 1) {
		nl = strchr(text, '\n');
		if (!nl)
			nl = text + strlen(text) - 1;
		printf("%s%.*s", *text == '\t' ? "" : "  ", (int)(nl - text + 1), text);
	}
}

void help_general(void)
{
	size_t i;

	printf("Commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		print_indented(commands[i].text);
	printf("\nType \"help <command>\" for one command, \"help <topic>\" for a topic.\n"
	       "Topics:");
	for (i = 0; help_topics[i]; i++)
		printf(" %s", help_topics[i]);
	printf("\n");
}

void help_on(const char *word)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].word, word)) {
			fputs(commands[i].text, stdout);
			return;
		}
	for (i = 0; i < sizeof(topics) / sizeof(topics[0]); i++)
		if (!strcmp(topics[i].word, word)) {
			fputs(topics[i].text, stdout);
			return;
		}
	/* the original's answer, on stdout: the general help follows */
	printf("No help for %s\n", word);
	help_general();
}
