/* table.c -- placeholder until the table command lands (issue 4). */
#include <stdio.h>

#include "diag.h"
#include "table.h"

int table_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "lguest-kvm table: not built yet\n");
	return EXIT_ERROR;
}
