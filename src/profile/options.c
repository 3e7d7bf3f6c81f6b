/* profile_check_files (src/profile/profile.h): the files options name, checked before the GPU is. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/device_model.h"
#include "base/error.h"
#include "src/profile/profile.h"

/*
 * The file an option names must be a readable regular file before any GPU
 * work (issue 16: a typo is an input error, exit 2, on any machine).
 * what says what the file is for. Returns 0 or CA_E_INPUT with the message set.
 */
static int check_file(const char *option, const char *path, const char *what)
{
	struct stat st;

	if (stat(path, &st))
		return error_set(CA_E_INPUT, "%s '%s': %s: %s", option, path, strerror(errno), what);
	if (S_ISDIR(st.st_mode))
		return error_set(CA_E_INPUT, "%s '%s' is a directory: %s", option, path, what);
	if (!S_ISREG(st.st_mode))
		return error_set(CA_E_INPUT, "%s '%s' is not a regular file: %s", option, path, what);
	if (access(path, R_OK))
		return error_set(CA_E_INPUT, "%s '%s': %s: %s", option, path, strerror(errno), what);
	return 0;
}

/* --device FILE and --compare FILE, read and checked before the GPU is. */
int profile_check_files(const struct profile_options *opt)
{
	int ret;

	if (opt->device_file) {
		struct device_model dm;

		ret = check_file("--device", opt->device_file,
					"give the device.json that 'cacheadvise probe -o FILE' wrote");
		if (ret)
			return ret;
		device_model_init(&dm);
		ret = device_model_load_file(&dm, opt->device_file);
		device_model_release(&dm);
		if (ret)
			return ret;
	}
	if (opt->compare_file)
		return check_file("--compare", opt->compare_file,
					 "run the program once so that it writes the file, then "
					 "profile it");
	return 0;
}
