/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pmd_log.c - registration of the "femud.pmd" log type (see pmd_log.h). */
#include "pmd/pmd_log.h"

RTE_LOG_REGISTER_DEFAULT(pmd_logtype, INFO);
