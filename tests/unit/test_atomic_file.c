/* base/atomic_file: single files and batches (all or none). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

	/* Through a link: a user's output is written through it (the link
	 * stays), a file of the tool's own replaces the link (the file it led
	 * to stays as it was). */
	{
		char *link = path_of("link"), *target = path_of("b");
		struct stat st;

		CHECK_INT(symlink(target, link), 0);
		CHECK_INT(write_file_atomic(link, "via link", 8), 0);
		CHECK(has("b", "via link"));
		CHECK(!lstat(link, &st) && S_ISLNK(st.st_mode));
		CHECK_INT(write_file_replacing(link, "own file", 8), 0);
		CHECK(has("link", "own file"));
		CHECK(has("b", "via link"));
		CHECK(!lstat(link, &st) && S_ISREG(st.st_mode));
		/* and a plain path or a new one is written as write_file_atomic writes it */
		CHECK_INT(write_file_replacing(link, "again", 5), 0);
		CHECK(has("link", "again"));
		unlink(link);
		free(link);
		free(target);
	}

	p = path_of("a");
	unlink(p);
	free(p);
	p = path_of("b");
	unlink(p);
	free(p);
	rmdir(dir);
	return check_done();
}
