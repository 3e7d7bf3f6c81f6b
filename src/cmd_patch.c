#include "src/cli.h"

/* NEEDSWORK: 'patch' is being written; see its issue. */
int cmd_patch(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(-1, "'patch' is not implemented yet");
}
