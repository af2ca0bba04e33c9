/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pmd_log.h - the pmd's rte_log type ("femud.pmd") and its log macro. */
#ifndef PMD_LOG_H
#define PMD_LOG_H

#include <rte_log.h>

extern int pmd_logtype;

#define PMD_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, pmd_logtype, "femud: " fmt "\n", ##__VA_ARGS__)

#endif /* PMD_LOG_H */
