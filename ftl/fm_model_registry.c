/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_model_registry.c - the table of device models femud serves, looked up
 * by FEMU's femu_mode number.  A new model is one new line here.
 */
#include "ftl/fm_model_registry.h"

static const struct fm_model_ops *const fm_models[] = {
    &fm_nossd_ops,
    &fm_bbssd_ops,
};

const struct fm_model_ops *fm_model_find(int femu_mode)
{
	for (size_t i = 0; i < sizeof(fm_models) / sizeof(fm_models[0]); i++)
		if (fm_models[i]->femu_mode == femu_mode)
			return fm_models[i];
	return NULL;
}
