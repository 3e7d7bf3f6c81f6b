#include "src/cli.h"

/* NEEDSWORK: 'run' is being written; see its issue. */
int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(-1, "'run' is not implemented yet");
}
