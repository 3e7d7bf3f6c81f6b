#include "src/cli.h"

/* NEEDSWORK: 'inspect' is being written; see its issue. */
int cmd_inspect(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(-1, "'inspect' is not implemented yet");
}
