#include "src/cli.h"

/* NEEDSWORK: 'solve' is being written; see its issue. */
int cmd_solve(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(-1, "'solve' is not implemented yet");
}
