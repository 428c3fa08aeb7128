/*
 * Tests for dockerd-proxy/docker_tar.c: the one-entry ustar archive that
 * gives /workspace to the sandbox user.  The header's checksum is checked
 * by hand, and the archive is read back with libarchive, which must see
 * exactly one directory with the right name, owner, mode and time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "proxy.h"

static unsigned long
octal_field(const unsigned char *p, size_t len)
{
	unsigned long	 v = 0;
	size_t		 i;

	for (i = 0; i < len && p[i] >= '0' && p[i] <= '7'; i++)
		v = v * 8 + (unsigned long)(p[i] - '0');
	return v;
}

static void
read_back(const unsigned char *tar, const char *name, unsigned int mode,
    uint32_t uid, uint32_t gid, long long mtime)
{
	struct archive		*a;
	struct archive_entry	*e;

	a = archive_read_new();
	assert_non_null(a);
	assert_int_equal(archive_read_support_format_tar(a), ARCHIVE_OK);
	assert_int_equal(archive_read_open_memory(a, tar,
	    TAR_DIR_ARCHIVE_LEN), ARCHIVE_OK);
	assert_int_equal(archive_read_next_header(a, &e), ARCHIVE_OK);
	assert_string_equal(archive_entry_pathname(e), name);
	assert_int_equal(archive_entry_filetype(e), AE_IFDIR);
	assert_int_equal(archive_entry_perm(e), mode);
	assert_int_equal(archive_entry_uid(e), uid);
	assert_int_equal(archive_entry_gid(e), gid);
	assert_int_equal(archive_entry_size(e), 0);
	assert_int_equal(archive_entry_mtime(e), mtime);
	assert_int_equal(archive_format(a), ARCHIVE_FORMAT_TAR_USTAR);
	assert_int_equal(archive_read_next_header(a, &e), ARCHIVE_EOF);
	assert_int_equal(archive_read_free(a), ARCHIVE_OK);
}

static void
test_workspace_entry(void **state)
{
	unsigned char	 tar[TAR_DIR_ARCHIVE_LEN];
	unsigned int	 sum = 0;
	size_t		 i;

	memset(tar, 0xa5, sizeof(tar));
	assert_int_equal(tar_dir_archive(tar, "workspace/", 0755, 1000, 1000,
	    1700000000), 0);
	/* The checksum: all header bytes, its own field counted as spaces. */
	for (i = 0; i < TAR_BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : tar[i];
	assert_int_equal(octal_field(tar + 148, 8), sum);
	assert_int_equal(tar[154], '\0');
	assert_int_equal(tar[155], ' ');
	assert_memory_equal(tar + 257, "ustar\0" "00", 8);
	assert_int_equal(tar[156], '5');
	assert_memory_equal(tar, "workspace/", 11);
	assert_int_equal(octal_field(tar + 108, 8), 1000);
	assert_int_equal(octal_field(tar + 116, 8), 1000);
	assert_int_equal(octal_field(tar + 100, 8), 0755);
	/* Then two zero blocks end the archive. */
	for (i = TAR_BLOCK; i < TAR_DIR_ARCHIVE_LEN; i++)
		assert_int_equal(tar[i], 0);
	read_back(tar, "workspace/", 0755, 1000, 1000, 1700000000);
}

static void
test_owners(void **state)
{
	static const uint32_t	 ids[] = {
		0, 1, 65534, 2097151, 2097152, 16777215, 16777216, 4294967295U
	};
	unsigned char		 tar[TAR_DIR_ARCHIVE_LEN];
	size_t			 i;

	/* Past 7 octal digits the numbers go in base-256. */
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		assert_int_equal(tar_dir_archive(tar, "workspace/", 0700,
		    ids[i], ids[sizeof(ids) / sizeof(ids[0]) - 1 - i], 0), 0);
		read_back(tar, "workspace/", 0700, ids[i],
		    ids[sizeof(ids) / sizeof(ids[0]) - 1 - i], 0);
	}
	assert_int_equal(tar_dir_archive(tar, "a/", 01777, 1, 2,
	    8589934591LL), 0);
	read_back(tar, "a/", 01777, 1, 2, 8589934591LL);
	assert_int_equal(tar_dir_archive(tar, "a/", 0755, 1, 2,
	    8589934592LL), 0);
	read_back(tar, "a/", 0755, 1, 2, 8589934592LL);
}

static void
test_bad_arguments(void **state)
{
	unsigned char	 tar[TAR_DIR_ARCHIVE_LEN];
	char		 name[120];

	assert_int_equal(tar_dir_archive(tar, "", 0755, 1, 1, 0), -1);
	assert_int_equal(tar_dir_archive(tar, "workspace", 0755, 1, 1, 0),
	    -1);
	assert_int_equal(tar_dir_archive(tar, "w/", 010000, 1, 1, 0), -1);
	assert_int_equal(tar_dir_archive(tar, "w/", 0755, 1, 1, -1), -1);
	memset(name, 'a', sizeof(name));
	name[99] = '/';
	name[100] = '\0';
	assert_int_equal(tar_dir_archive(tar, name, 0755, 1, 1, 0), -1);
	name[98] = '/';
	name[99] = '\0';
	assert_int_equal(tar_dir_archive(tar, name, 0755, 1, 1, 0), 0);
	read_back(tar, name, 0755, 1, 1, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workspace_entry),
		cmocka_unit_test(test_owners),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
