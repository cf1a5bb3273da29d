/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Validation pattern. Byte i of a message is a function of a seed and i; the
 * seed mixes message size, iteration, window slot and sender, so a stale,
 * shifted, truncated or misrouted message never passes.
 */
#ifndef GDRB_PATTERN_H
#define GDRB_PATTERN_H

#include <stddef.h>
#include <stdint.h>

uint64_t gdrb_pattern_seed(size_t size, uint64_t iter, unsigned slot, unsigned sender);


/*
 * Count bytes of [buf, buf + len) that differ from the pattern of seed; the
 * offset of the first wrong byte goes to *first_bad when one is found.
 * `base` is the offset of buf within the message, for checks done in chunks.
 */
uint64_t gdrb_pattern_check(const void *buf, size_t len, uint64_t seed, size_t base,
			    size_t *first_bad);
/* Byte i of the pattern of seed. */
unsigned char gdrb_pattern_byte(uint64_t seed, size_t i);
void gdrb_pattern_fill_at(void *buf, size_t len, uint64_t seed, size_t base);

#endif
