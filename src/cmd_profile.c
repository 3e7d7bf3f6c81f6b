#include "src/cli.h"

/* NEEDSWORK: 'profile' is being written; see its issue. */
int cmd_profile(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(-1, "'profile' is not implemented yet");
}
