// SPDX-License-Identifier: BSD-2-Clause
/*
 * file.c - opening a trace file: mapping, magic and byte order, the file
 * header (read through its slot names), the block header layout; closing;
 * error text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tnf_impl.h"

#define TNF_MAGIC	  0x544E4600u
#define TNF_MAGIC_SWAPPED 0x00464E54u
#define FILE_HEADER	  4 /* the file header record follows the magic */

static const char *const messages[TNF_ERR_MAX] = {
	[TNF_ERR_NONE] = "no error",
	[TNF_ERR_NOMEM] = "out of memory",
	[TNF_ERR_IO] = "cannot read the file",
	[TNF_ERR_EMPTY] = "empty file",
	[TNF_ERR_ALLZERO] = "empty TNF file (all zeros)",
	[TNF_ERR_NOTTNF] = "not a TNF file",
	[TNF_ERR_TRUNCATED] = "truncated TNF file (shorter than its header says)",
	[TNF_ERR_BADHEADER] = "bad TNF file header",
	[TNF_ERR_BADREF] = "bad reference",
	[TNF_ERR_BADTYPE] = "bad type record",
	[TNF_ERR_BADRECORD] = "bad record",
	[TNF_ERR_NOTFOUND] = "no such slot or element",
	[TNF_ERR_INVAL] = "invalid argument",
};

const char *tnf_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= TNF_ERR_MAX)
		return "unknown error";
	return messages[err];
}

uint32_t tnf_error_offset(const struct tnf_file *f)
{
	return f ? f->err_off : 0;
}

const struct tnf_file_info *tnf_file_info(const struct tnf_file *f)
{
	return f ? &f->info : NULL;
}

/* An inline integer slot of the file header, by name. */
static bool header_u32(struct tnf_file *f, struct tnf_datum fh, const char *name, uint32_t *v)
{
	int64_t x;

	if (tnf_get_int_named(f, fh, name, &x))
		return false;
	*v = (uint32_t)x;
	return true;
}

/* Where generation and bytes_valid sit in a block header. */
static int block_layout(struct tnf_file *f)
{
	struct tnf_datum bh, gen, bv;
	uint64_t blk;
	uint32_t v;
	int err;

	for (blk = f->data_start; blk + f->info.block_size <= f->end; blk += f->info.block_size) {
		if (!tnf_rd32(f, blk, &v))
			break;
		if (v)
			break;
	}
	if (blk + f->info.block_size > f->end)
		return 0; /* no block used: no records */
	err = tnf_datum_for(f, (uint32_t)blk, &bh);
	if (err)
		return err;
	if (tnf_slot_named(f, bh, "generation", &gen) || tnf_slot_named(f, bh, "bytes_valid", &bv))
		return tnf_set_err(f, TNF_ERR_BADHEADER, (uint32_t)blk);
	if (tnf_type_size(gen.type) != 4 || !gen.off || !bv.off ||
	    (tnf_type_size(bv.type) != 2 && tnf_type_size(bv.type) != 4))
		return tnf_set_err(f, TNF_ERR_BADHEADER, (uint32_t)blk);
	f->gen_off = gen.off - (uint32_t)blk;
	f->bv_off = bv.off - (uint32_t)blk;
	f->bv_size = tnf_type_size(bv.type);
	f->blk_ready = true;
	return 0;
}

static int parse_header(struct tnf_file *f)
{
	struct tnf_file_info *in = &f->info;
	struct tnf_datum fh;
	uint32_t dir_blocks;
	int err;

	err = tnf_datum_for(f, FILE_HEADER, &fh);
	if (err == -TNF_ERR_NOMEM)
		return err;
	if (err || tnf_datum_kind(fh) != TNF_K_STRUCT)
		return tnf_set_err(f, TNF_ERR_BADHEADER, FILE_HEADER);
	if (!header_u32(f, fh, "block_size", &in->block_size) ||
	    !header_u32(f, fh, "directory_size", &in->directory_size) ||
	    !header_u32(f, fh, "block_count", &in->block_count) ||
	    !header_u32(f, fh, "file_logical_size", &in->file_log_size))
		return tnf_set_err(f, TNF_ERR_BADHEADER, FILE_HEADER);
	header_u32(f, fh, "file_version", &in->file_version);
	header_u32(f, fh, "block_header_size", &in->block_header_size);
	header_u32(f, fh, "blocks_valid", &in->blocks_valid);

	if (in->block_size < 64 || in->block_size > (1u << 24) ||
	    (in->block_size & (in->block_size - 1)))
		return tnf_set_err(f, TNF_ERR_BADHEADER, FILE_HEADER);
	for (f->block_shift = 0; (1u << f->block_shift) != in->block_size; f->block_shift++)
		;
	if (in->directory_size < in->block_size || in->directory_size % in->block_size)
		return tnf_set_err(f, TNF_ERR_BADHEADER, FILE_HEADER);
	dir_blocks = in->directory_size / in->block_size;
	if (in->block_count < dir_blocks)
		return tnf_set_err(f, TNF_ERR_BADHEADER, FILE_HEADER);
	if (in->file_log_size < f->block_shift || in->file_log_size > 31)
		return tnf_set_err(f, TNF_ERR_BADHEADER, FILE_HEADER);
	in->used_size = (uint64_t)in->block_count * in->block_size;
	if (in->used_size > UINT32_MAX)
		return tnf_set_err(f, TNF_ERR_BADHEADER, FILE_HEADER);
	if (in->used_size > f->size)
		return tnf_set_err(f, TNF_ERR_TRUNCATED, FILE_HEADER);
	/* the header record must fit in block 0 */
	if (tnf_record_size(f, fh) > in->block_size - FILE_HEADER)
		return tnf_set_err(f, TNF_ERR_BADHEADER, FILE_HEADER);

	f->end = (uint32_t)in->used_size;
	f->data_start = in->directory_size;
	f->addr_mask = (uint32_t)((1ull << in->file_log_size) - 1);
	return block_layout(f);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int open_common(struct tnf_file *f)
{
	uint32_t magic;
	int err;

	if (f->size == 0)
		return -TNF_ERR_EMPTY;
	if (all_zero(f->base, f->size))
		return -TNF_ERR_ALLZERO;
	if (f->size < 8)
		return -TNF_ERR_NOTTNF;
	memcpy(&magic, f->base, 4);
	if (magic == TNF_MAGIC)
		f->swap = false;
	else if (magic == TNF_MAGIC_SWAPPED)
		f->swap = true;
	else
		return -TNF_ERR_NOTTNF;
	f->info.swapped = f->swap;
	/* until the header is read, everything mapped may be looked at */
	f->end = f->size > UINT32_MAX ? UINT32_MAX : (uint32_t)f->size;
	err = parse_header(f);
	if (err) {
		/* forget types read under the provisional bounds */
		tnf_types_free(f);
		return err;
	}
	/* types were read before the block layout was known: read them again */
	tnf_types_free(f);
	return 0;
}

int tnf_open_mem(const void *data, size_t size, struct tnf_file **out)
{
	struct tnf_file *f;
	int err;

	if (!out || (!data && size))
		return -TNF_ERR_INVAL;
	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -TNF_ERR_NOMEM;
	f->base = data;
	f->size = size;
	err = open_common(f);
	if (err) {
		tnf_close(f);
		return err;
	}
	*out = f;
	return 0;
}

int tnf_open(const char *path, struct tnf_file **out)
{
	struct tnf_file *f;
	struct stat st;
	void *p = NULL;
	int fd, err, saved;

	if (!path || !out)
		return -TNF_ERR_INVAL;
	*out = NULL;
	/* O_NONBLOCK: a FIFO without a writer must be refused, not waited for */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -TNF_ERR_IO;
	if (fstat(fd, &st) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -TNF_ERR_IO;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return -TNF_ERR_IO;
	}
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			saved = errno;
			close(fd);
			errno = saved;
			return -TNF_ERR_IO;
		}
	}
	close(fd);
	f = calloc(1, sizeof(*f));
	if (!f) {
		if (p)
			munmap(p, (size_t)st.st_size);
		return -TNF_ERR_NOMEM;
	}
	f->map = p;
	f->map_size = (size_t)st.st_size;
	f->base = p;
	f->size = (size_t)st.st_size;
	err = open_common(f);
	if (err) {
		tnf_close(f);
		return err;
	}
	*out = f;
	return 0;
}

void tnf_close(struct tnf_file *f)
{
	if (!f)
		return;
	tnf_types_free(f);
	if (f->map)
		munmap(f->map, f->map_size);
	free(f);
}
