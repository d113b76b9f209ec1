/*
 * corpus_replay.h -- the seed corpus as a regression set, for the smoke
 * mode of every fuzz target: each file in a folder (dot-files aside) goes
 * through the target's LLVMFuzzerTestOneInput once, in a buffer of exactly
 * its size, so a read one byte past the input is as visible to ASan here as
 * under libFuzzer.  A minimised finding dropped into the folder is replayed
 * by every later test run.
 */
#ifndef CORPUS_REPLAY_H
#define CORPUS_REPLAY_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* How many files were replayed; exits 1 if the folder cannot be read. */
static inline unsigned corpus_replay(const char *who, const char *dir)
{
	static uint8_t buf[1 << 20];
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned files = 0;

	if (!d) {
		fprintf(stderr, "%s: %s: %s\n", who, dir, strerror(errno));
		exit(1);
	}
	while ((e = readdir(d))) {
		char path[4096];
		uint8_t *exact;
		FILE *f;
		size_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!(f = fopen(path, "rb")))
			continue;
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		exact = malloc(n ? n : 1);
		if (!exact)
			exit(1);
		memcpy(exact, buf, n);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
		files++;
	}
	closedir(d);
	return files;
}

#endif
