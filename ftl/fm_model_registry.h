/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_model_registry.h - the device models femud serves (ftl/), looked up by
 * FEMU's femu_mode number.  The interface they implement is fm_model.h.
 */
#ifndef FM_MODEL_REGISTRY_H
#define FM_MODEL_REGISTRY_H

#include "ftl/fm_model.h"

/* The model for femu_mode; NULL when not supported. */
const struct fm_model_ops *fm_model_find(int femu_mode);

extern const struct fm_model_ops fm_nossd_ops; /* femu_mode=2, nossd.c */
extern const struct fm_model_ops fm_bbssd_ops; /* femu_mode=1, bbssd.c */

#endif /* FM_MODEL_REGISTRY_H */
