#include "src/cli.h"

/* NEEDSWORK: 'probe' is being written; see its issue. */
int cmd_probe(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(-1, "'probe' is not implemented yet");
}
