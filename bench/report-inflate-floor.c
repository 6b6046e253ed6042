// SPDX-License-Identifier: MIT
/*
 * The floor of reading a pmon recording (bench/report-scale.sh): every
 * chunk read, its CRC checked and its payload inflated, as pmon report's
 * readers do (raw deflate, one thread), and nothing else: no record is
 * looked at. Prints the bytes inflated.
 * usage: report-inflate-floor FILE
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int main(int argc, char **argv)
{
	static uint8_t in[512 * 1024], out[512 * 1024];
	uint32_t hsize, c[4];
	uint64_t raw = 0;
	z_stream zs = { 0 };
	int fd;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0 || pread(fd, &hsize, 4, 12) != 4 ||
	    inflateInit2(&zs, -15) != Z_OK) {
		fprintf(stderr, "usage: report-inflate-floor FILE\n");
		return 2;
	}
	for (off_t off = hsize; pread(fd, c, 16, off) == 16; off += 16 + c[1]) {
		if (c[1] > sizeof(in) || pread(fd, in, c[1], off + 16) != (ssize_t)c[1] ||
		    crc32(0L, in, c[1]) != c[2])
			return 1;
		if (memcmp(c, "CHNZ", 4)) {
			raw += c[1];
			continue;
		}
		inflateReset(&zs);
		zs.next_in = in + 2;
		zs.avail_in = c[1] - 2;
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		if (inflate(&zs, Z_FINISH) != Z_STREAM_END)
			return 1;
		raw += sizeof(out) - zs.avail_out;
	}
	printf("%llu\n", (unsigned long long)raw);
	inflateEnd(&zs);
	close(fd);
	return 0;
}
