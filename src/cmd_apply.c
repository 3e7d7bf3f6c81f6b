#include "src/cli.h"

/* NEEDSWORK: 'apply' is being written; see its issue. */
int cmd_apply(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(-1, "'apply' is not implemented yet");
}
