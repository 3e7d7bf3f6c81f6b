#include "src/cli.h"

/* NEEDSWORK: 'report' is being written; see its issue. */
int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(-1, "'report' is not implemented yet");
}
