/* base/atomic_file: single files and batches (all or none). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "check.h"

static char dir[] = "/tmp/test_atomic_file.XXXXXX";

static char *path_of(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static int has(const char *name, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	char *p = path_of(name);
	int ret = !strbuf_read_file(&sb, p, 0) && sb.len == strlen(text) &&
		  !memcmp(sb.buf, text, sb.len);

	strbuf_release(&sb);
	free(p);
	return ret;
}

static void put(const char *name, const char *text)
{
	char *p = path_of(name);

	CHECK_INT(write_file_atomic(p, text, strlen(text)), 0);
	free(p);
}

/* Files in dir: temporaries left behind show here. */
static int nr_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/*
 * The temporary name of the old scheme, "<path>.tmp.<pid>", taken in
 * advance by a link to a file outside and by a FIFO (issue 36, item 3):
 * the write must neither go through the link nor wait on the FIFO. The
 * FIFO case runs in a child under an alarm, so that a hang is a failure.
 */
static void hijack_checks(void)
{
	char *out = path_of("out"), *victim = path_of("victim"), *tmp;
	struct stat st;
	pid_t pid;
	int status = 0;

	put("victim", "victim");
	tmp = xasprintf("%s.tmp.%ld", out, (long)getpid());
	CHECK_INT(symlink(victim, tmp), 0);
	CHECK_INT(write_file_atomic(out, "out", 3), 0);
	CHECK(has("victim", "victim"));
	CHECK(has("out", "out"));
	CHECK(!lstat(out, &st) && S_ISREG(st.st_mode));
	CHECK(!lstat(tmp, &st) && S_ISLNK(st.st_mode));  /* not ours: left alone */
	unlink(tmp);
	free(tmp);
	unlink(out);

	pid = fork();
	if (!pid) {
		tmp = xasprintf("%s.tmp.%ld", out, (long)getpid());
		if (mkfifo(tmp, 0600))
			_exit(3);
		alarm(20);
		_exit(write_file_atomic(out, "fifo", 4) ? 4 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(has("out", "fifo"));
	tmp = xasprintf("%s.tmp.%ld", out, (long)pid);
	unlink(tmp);
	free(tmp);
	unlink(out);
	unlink(victim);
	free(out);
	free(victim);
}

/* The final mode is what fopen would give: 0666 less the umask. */
static void mode_checks(void)
{
	char *p = path_of("mode");
	mode_t old = umask(022);
	struct stat st;

	CHECK_INT(write_file_atomic(p, "m", 1), 0);
	CHECK(!stat(p, &st) && (st.st_mode & 07777) == 0644);
	unlink(p);
	umask(077);
	CHECK_INT(write_file_atomic(p, "m", 1), 0);
	CHECK(!stat(p, &st) && (st.st_mode & 07777) == 0600);
	unlink(p);
	umask(old);
	free(p);
}

int main(void)
{
	char *p;

	if (!mkdtemp(dir))
		return 2;
	put("a", "old a");
	put("b", "old b");
	CHECK(has("a", "old a"));

	/* An aborted batch replaces nothing and leaves no temporary. */
	atomic_batch_begin();
	put("a", "new a");
	put("b", "new b");
	put("c", "new c");
	CHECK(has("a", "old a"));
	CHECK(has("b", "old b"));
	atomic_batch_abort();
	CHECK(has("a", "old a"));
	CHECK(has("b", "old b"));
	CHECK_INT(nr_entries(), 2);

	/* A committed batch replaces every file; a path written twice keeps the last. */
	atomic_batch_begin();
	put("a", "first a");
	put("b", "new b");
	put("a", "new a");
	CHECK(has("a", "old a"));
	CHECK_INT(atomic_batch_commit(), 0);
	CHECK(has("a", "new a"));
	CHECK(has("b", "new b"));
	CHECK_INT(nr_entries(), 2);

	/* After the batch, a write is renamed at once again. */
	put("a", "newer a");
	CHECK(has("a", "newer a"));

	/* A file that cannot be written fails inside the batch, and abort cleans up. */
	atomic_batch_begin();
	put("b", "newest b");
	p = xasprintf("%s/no/such/dir/x", dir);
	CHECK(write_file_atomic(p, "x", 1) < 0);
	free(p);
	atomic_batch_abort();
	CHECK(has("b", "new b"));
	CHECK_INT(nr_entries(), 2);

	/* A symbolic link at the target is replaced, never written through:
	 * the file it led to stays as it was (issue 36). */
	{
		char *link = path_of("link"), *target = path_of("b");
		struct stat st;

		CHECK_INT(symlink(target, link), 0);
		CHECK_INT(write_file_atomic(link, "own file", 8), 0);
		CHECK(has("link", "own file"));
		CHECK(has("b", "new b"));
		CHECK(!lstat(link, &st) && S_ISREG(st.st_mode));
		unlink(link);
		/* a dangling one too, and in a batch */
		CHECK_INT(symlink("no-such-file", link), 0);
		atomic_batch_begin();
		CHECK_INT(write_file_atomic(link, "batch", 5), 0);
		CHECK_INT(atomic_batch_commit(), 0);
		CHECK(has("link", "batch"));
		CHECK(!lstat(link, &st) && S_ISREG(st.st_mode));
		unlink(link);
		free(link);
		free(target);
	}

	hijack_checks();
	mode_checks();
	CHECK(write_file_atomic("", "x", 1) < 0);
	CHECK_INT(nr_entries(), 2);

	p = path_of("a");
	unlink(p);
	free(p);
	p = path_of("b");
	unlink(p);
	free(p);
	rmdir(dir);
	return check_done();
}
