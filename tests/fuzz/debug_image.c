/*
 * debug_image.c - libFuzzer target for the image of a debug file's compressed sections
 * (sym_dwarf.c): the sections lines and scopes need, inflated into an ELF libdw reads. A debug
 * file is found by build-id or debug link and may come from anywhere: `make fuzz`, and a short
 * run in `make test`.
 *
 * Whatever the bytes, either no image is made, or one whose section headers all lie inside it,
 * each wanted section at its inflated size; nothing is read past the input (ASan).
 */
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);
	Elf *elf, *img = NULL;
	Elf_Scn *scn = NULL;
	void *image;
	size_t isize;
	int err;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	if (!elf) {
		free(copy);
		return 0;
	}
	err = sym_dwarf_image(elf, &image, &isize, &img);
	if (err == -ENOMEM)
		abort(); /* a fuzz input claims at most ~1000x its size */
	if (img) {
		while ((scn = elf_nextscn(img, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh))
				abort();
			if (sh.sh_offset > isize || sh.sh_size > isize - sh.sh_offset)
				abort();
		}
		elf_end(img);
		sym_dwarf_image_free(image, isize);
	}
	elf_end(elf);
	free(copy);
	return 0;
}
